/**
 * The entities of a command, read as its operation needs them: environments by their
 * prepositions ("из dev в prod"), numbers as ids, database pairs of a migration, a commit
 * message, and the leftover words and quoted names as titles, slugs or a search text.
 */
import type { Entities, Language, ObjectRef, Operation } from './intent.ts';
import type { Concept, Prep } from './lexicon.ts';
import { isConcept, type Sentence } from './marks.ts';
import type { Reading } from './classify.ts';
import { reviewEntities } from './review-entities.ts';
import type { Token } from './tokenise.ts';

/** The entities, and the operation as they settle it (a list with something to look for is a search). */
export function readEntities(s: Sentence, reading: Reading, language: Language): { entities: Entities; operation: Operation } {
  const { domain, concepts } = reading;
  let operation = reading.operation;
  const has = (c: Concept) => concepts.has(c);
  const consumed = new Set<number>();
  markUnnamedEnvironments(s, operation === 'migrate' || operation === 'deploy');
  const entities: Entities = environmentEntities(s, reading);

  // The last one: a reply to "which task?" ("7f1c2a9b") follows the command that asked it.
  const taskIdIndex = s.marks.findLastIndex((m) => m?.kind === 'task_id');
  if (taskIdIndex >= 0) entities.task_id = s.tokens[taskIdIndex]!.norm;
  if (domain === 'tasks' && has('latest') && !entities.task_id) entities.latest = true;
  if (operation === 'migrate') {
    const pairs = databasePairs(s, consumed);
    if (pairs.length) entities.db_mappings = pairs;
  }
  const numbers = numbersOf(s, consumed);
  if (operation === 'commit') {
    const message = commitMessage(s, consumed);
    if (message !== undefined) entities.message = message;
  }
  if (operation === 'deploy') {
    const c = s.marks.findIndex((m) => m?.kind === 'commit');
    if (c >= 0) entities.commit = s.tokens[c]!.norm;
  }
  const refs = refsOf(s, consumed);

  if (domain === 'dashboards' || domain === 'datasets' || domain === 'git') {
    if (operation === 'list' || operation === 'search') {
      let query = refs.length ? refs.join(' ') : undefined;
      if (numbers.length && !query) query = numbers.join(' ');
      if (query !== undefined) {
        entities.query = query;
        operation = 'search';
      }
    } else if (operation !== 'unsupported') {
      const objects: ObjectRef[] = [...numbers, ...refs];
      if (objects.length) entities[domain === 'datasets' ? 'datasets' : 'dashboards'] = [...new Set(objects)];
    }
  }
  if (operation === 'set_field' || operation === 'answer') Object.assign(entities, reviewEntities(s, operation));
  if (operation === 'migrate') entities.dry_run = has('dry_run');
  if (operation === 'generate_docs') entities.language = s.marks.find((m) => m?.kind === 'lang')?.value ?? language;
  if (operation === 'unsupported') entities.verb = s.tokens[s.marks.findIndex((_, i) => isConcept(s, i, 'unsupported'))]!.norm;
  return { entities, operation };
}

/** The preposition a word follows, past fillers and the word "environment" (at most three words back). */
function prepBefore(s: Sentence, i: number): ReadonlySet<Prep> | undefined {
  for (let j = i - 1; j >= 0 && j >= i - 3; j--) {
    const m = s.marks[j];
    if (m?.kind === 'prep') return m.preps;
    if (m?.kind === 'concept' && m.concept === 'environment') continue;
    if (m?.kind === 'filler') continue;
    return undefined;
  }
  return undefined;
}

const afterEnvWord = (s: Sentence, i: number) => i > 0 && isConcept(s, i - 1, 'environment');

/**
 * Names not known as environments still read as one where the sentence says so: after
 * "environment" / "окружение", or after from / to in a migration or deploy.
 */
function markUnnamedEnvironments(s: Sentence, twoEnvs: boolean): void {
  s.tokens.forEach((t, i) => {
    if (s.marks[i] !== undefined || (t.quoted && !afterEnvWord(s, i))) return;
    const p = prepBefore(s, i);
    if (afterEnvWord(s, i) || (twoEnvs && p && (p.has('from') || p.has('to')) && t.script !== 'number')) {
      s.marks[i] = { kind: 'env', value: t.quoted ? t.raw : t.norm };
    }
  });
}

/** One environment, or a source and a target ("from" / "to", else in the order named) for a migration, deploy or pull request. */
function environmentEntities(s: Sentence, { domain, operation }: Reading): Entities {
  const mentions: Array<{ value: string; prep?: ReadonlySet<Prep> }> = [];
  s.marks.forEach((m, i) => {
    if (m?.kind === 'env') mentions.push({ value: m.value, prep: prepBefore(s, i) });
  });
  // A pull request names, as a deploy does, the repository's environment and the one its merge deploys into.
  if (operation !== 'migrate' && operation !== 'deploy' && operation !== 'open_pr') {
    const scoped = mentions.length && domain !== 'help' && domain !== 'tasks' && domain !== 'dataset_review';
    return scoped ? { environment: mentions[0]!.value } : {};
  }
  let source: string | undefined;
  let target: string | undefined;
  const unmarked: string[] = [];
  for (const m of mentions) {
    if (m.prep?.has('from') && !source) source = m.value;
    else if (m.prep?.has('to') && !target) target = m.value;
    else unmarked.push(m.value);
  }
  for (const v of unmarked) {
    if (!source) source = v;
    else if (!target) target = v;
  }
  const e: Entities = {};
  if (operation === 'migrate') {
    if (source) e.source_environment = source;
    if (target) e.target_environment = target;
  } else {
    // A deploy names the environment whose repository it takes and the one it deploys into.
    if (source ?? target) e.environment = (source ?? target)!;
    if (target ?? source) e.target_environment = (target ?? source)!;
  }
  return e;
}

/** "база 3 → 7", "database 3 to 7", "db 3:7": a database mapping of a migration, not dashboards. */
function databasePairs(s: Sentence, consumed: Set<number>): NonNullable<Entities['db_mappings']> {
  const { tokens, marks } = s;
  const pairs: NonNullable<Entities['db_mappings']> = [];
  const skip = (j: number) => {
    while (j < tokens.length && (marks[j]?.kind === 'filler' || marks[j]?.kind === 'prep')) j++;
    return j;
  };
  marks.forEach((m, i) => {
    if (m?.kind !== 'concept' || m.concept !== 'database') return;
    const a = skip(i + 1);
    const joined = /^(\d{1,10}):(\d{1,10})$/.exec(tokens[a]?.norm ?? '');
    if (joined && marks[a] === undefined) {
      pairs.push({ source_database_id: Number(joined[1]), target_database_id: Number(joined[2]) });
      consumed.add(a);
      return;
    }
    const b = skip(a + 1);
    const first = marks[a];
    const second = marks[b];
    if (first?.kind === 'number' && second?.kind === 'number') {
      pairs.push({ source_database_id: first.value, target_database_id: second.value });
      consumed.add(a);
      consumed.add(b);
    }
  });
  return pairs;
}

function numbersOf(s: Sentence, consumed: Set<number>): number[] {
  const numbers: number[] = [];
  s.marks.forEach((m, i) => {
    if (m?.kind === 'number' && !consumed.has(i)) {
      numbers.push(m.value);
      consumed.add(i);
    }
  });
  return numbers;
}

/** The quoted text after a marker ("с сообщением «…»"), else the last quoted text, else everything after the marker. */
function commitMessage(s: Sentence, consumed: Set<number>): string | undefined {
  const { text, tokens, marks } = s;
  const quoted = tokens.map((t, i) => (t.quoted && marks[i] === undefined ? i : -1)).filter((i) => i >= 0);
  let msg = quoted.find((i) => marks[i - 1]?.kind === 'marker' || (marks[i - 1]?.kind === 'filler' && marks[i - 2]?.kind === 'marker'));
  if (msg === undefined && quoted.length) msg = quoted[quoted.length - 1];
  if (msg !== undefined) {
    consumed.add(msg);
    return tokens[msg]!.raw;
  }
  const m = marks.findIndex((x) => x?.kind === 'marker');
  if (m < 0 || m + 1 >= tokens.length) return undefined;
  for (let k = m + 1; k < tokens.length; k++) consumed.add(k);
  return text.slice(tokens[m + 1]!.start, tokens[tokens.length - 1]!.end).trim();
}

/** Titles, slugs, table names or a search text: quoted tokens, and runs of unmarked words. */
function refsOf(s: Sentence, consumed: ReadonlySet<number>): string[] {
  const refs: string[] = [];
  let run: Token[] = [];
  const flush = () => {
    if (run.length) refs.push(s.text.slice(run[0]!.start, run[run.length - 1]!.end));
    run = [];
  };
  s.tokens.forEach((t, i) => {
    if (consumed.has(i)) return flush();
    if (t.quoted && s.marks[i] === undefined) {
      flush();
      refs.push(t.raw);
    } else if (s.marks[i] === undefined) run.push(t);
    else flush();
  });
  flush();
  return refs;
}
