/**
 * No swallowed error (docs/layout.md, "Lint"): a `catch` block, or a `.catch(...)` / `.then(_, ...)`
 * handler, must use the error it caught (log it, record it, return it, test it) or throw. An error
 * that is expected and meant to be dropped says so in a comment starting `expected:` inside the
 * handler (or on the line before it), e.g. `// expected: the file may not exist yet`.
 */
const MARK = /^\s*expected:/i;

/** True when the subtree holds a `throw` outside nested functions. */
function throws(node) {
  let found = false;
  const walk = (n) => {
    if (found || !n || typeof n.type !== 'string') return;
    if (n.type === 'ThrowStatement') return void (found = true);
    if (n !== node && /Function/.test(n.type)) return;
    for (const key of Object.keys(n)) {
      if (key === 'parent') continue;
      const v = n[key];
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v.type === 'string') walk(v);
    }
  };
  walk(node);
  return found;
}

/** @type {import('eslint').Rule.RuleModule} */
export default {
  meta: {
    type: 'problem',
    docs: { description: 'An error caught is used, rethrown, or marked `// expected: why`' },
    schema: [],
    messages: {
      swallowed:
        'This {{what}} drops the error: log or record it with its item and step, rethrow it, or say why it is expected in a comment starting "expected:".',
    },
  },
  create(context) {
    const source = context.sourceCode;
    const marked = (node) => {
      const comments = [...source.getCommentsInside(node), ...source.getCommentsBefore(node)];
      const line = node.loc.start.line;
      for (const c of source.getAllComments()) if (c.loc.end.line === line - 1 || c.loc.end.line === line) comments.push(c);
      return comments.some((c) => MARK.test(c.value.replace(/^\*+/, '')));
    };
    const used = (param) => {
      if (!param) return false;
      if (param.type !== 'Identifier') return true; // a destructured error is used by its pattern
      const variable = source.getDeclaredVariables(param.parent).find((v) => v.name === param.name);
      return Boolean(variable && variable.references.length > 0);
    };
    const check = (node, param, body, what) => {
      if (used(param) || throws(body) || marked(node)) return;
      context.report({ node, messageId: 'swallowed', data: { what } });
    };
    const handler = (fn, what) => {
      if (!fn || (fn.type !== 'ArrowFunctionExpression' && fn.type !== 'FunctionExpression')) return;
      const param = fn.params[0];
      if (param && param.type === 'Identifier') {
        const variable = source.getDeclaredVariables(fn).find((v) => v.name === param.name);
        if (variable && variable.references.length > 0) return;
      } else if (param) return;
      if (throws(fn.body) || marked(fn)) return;
      context.report({ node: fn, messageId: 'swallowed', data: { what } });
    };
    return {
      CatchClause(node) {
        check(node, node.param, node.body, 'catch block');
      },
      CallExpression(node) {
        const callee = node.callee;
        if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier') return;
        if (callee.property.name === 'catch') handler(node.arguments[0], '.catch handler');
        else if (callee.property.name === 'then') handler(node.arguments[1], '.then rejection handler');
      },
    };
  },
};
