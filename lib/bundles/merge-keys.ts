/**
 * YAML merge keys (`<<`), read one way everywhere: refused. PyYAML, which Superset imports with,
 * merges a plain `<<` key's mapping into the mapping that holds it (YAML 1.1). js-yaml's core schema
 * and YAML 1.2 read it as an ordinary key instead. A bundle that held one would then show
 * Switchyard's remapping, rules and diffs one object while Superset applied another (a
 * `database_uuid` or `sql` merged in unseen). Superset never writes one: PyYAML quotes a key
 * named `<<` ('<<'), and a quoted `<<` is an ordinary key under every reader, so it is kept.
 * Writers refuse a `<<` key altogether, since the `yaml` library writes it plain.
 */
import { isScalar, parseDocument, visit } from 'yaml';

export class MergeKeyError extends Error {
  override name = 'MergeKeyError';
}

/** Throws MergeKeyError, naming its line, when `text` holds a plain `<<` mapping key (a merge under YAML 1.1). */
export function refusePlainMergeKey(text: string): void {
  if (!text.includes('<<')) return; // a plain scalar has no escapes: no `<<` in the text, no merge key
  // Read as YAML 1.2, where a plain `<<` is an ordinary key, so it stays a node to find.
  const doc = parseDocument(text, { uniqueKeys: false });
  let offset: number | undefined;
  visit(doc, {
    Pair(_, pair) {
      if (isScalar(pair.key) && pair.key.value === '<<' && pair.key.type === 'PLAIN') {
        offset = pair.key.range?.[0] ?? 0;
        return visit.BREAK;
      }
      return undefined;
    },
  });
  if (offset === undefined) return;
  const line = text.slice(0, offset).split('\n').length;
  throw new MergeKeyError(
    `line ${line} holds a YAML merge key (<<): Superset would merge its fields into that object where Switchyard's remapping, rules and diffs do not see them; Superset's exports never hold one, so export the object again from Superset (or quote the key, '<<', if it is meant as a key)`,
  );
}

/** Throws MergeKeyError when `content` has a mapping key `<<` anywhere: written out plain, PyYAML would merge it. */
export function refuseMergeKeyIn(content: unknown, at = ''): void {
  if (Array.isArray(content)) {
    content.forEach((v, i) => refuseMergeKeyIn(v, `${at}[${i}]`));
    return;
  }
  if (!content || typeof content !== 'object' || content instanceof Date) return;
  for (const [key, value] of Object.entries(content)) {
    const path = at ? `${at}.${key}` : key;
    if (key === '<<')
      throw new MergeKeyError(
        `${path} is a key named '<<', which Superset's YAML reader would take as a merge of its fields into the object holding it; rename the key in the source`,
      );
    refuseMergeKeyIn(value, path);
  }
}
