/**
 * The assistant's parser: Russian or English command text → an intent, by rules and the lexicon
 * (lexicon/keywords.json), never by a language model, so the same text and the same known
 * environments always give the same intent.
 *
 * Steps: tokenise (quoted names kept whole), mark known environment names (the caller's
 * environments, up to three words), lexicon phrases by Snowball stem, fillers, prepositions,
 * numbers, task ids and commits, then keywords with one wrong letter; the set of concepts found
 * decides the operation, and the operation decides how the remaining words are read (environments
 * by their prepositions, numbers as ids, the rest as titles, a search text or a commit message).
 */
import { distance } from 'fastest-levenshtein';
import { lexicon, type Concept, type Prep } from './lexicon.ts';
import { normaliseText } from './normalise.ts';
import { tokenise, type Token } from './tokenise.ts';

export type Language = 'ru' | 'en';
export type Domain = 'help' | 'dashboards' | 'datasets' | 'tasks' | 'git' | 'dataset_review' | 'unknown';
export type Operation =
  | 'capabilities'
  | 'list'
  | 'search'
  | 'status'
  | 'logs'
  | 'migrate'
  | 'backup'
  | 'generate_docs'
  | 'commit'
  | 'deploy'
  | 'show'
  | 'set_field'
  | 'approve_mappings'
  | 'answer'
  | 'unsupported'
  | 'unknown';
/** `safe`: reads only; `low`: a task that changes nothing (dry run); `medium`: writes outside Superset; `high`: changes Superset. */
export type RiskLevel = 'safe' | 'low' | 'medium' | 'high';

/** A dashboard or dataset as named in the text: its id, or a title / slug / table name. */
export type ObjectRef = number | string;

export interface Entities {
  environment?: string;
  source_environment?: string;
  target_environment?: string;
  dashboards?: ObjectRef[];
  datasets?: ObjectRef[];
  query?: string;
  task_id?: string;
  latest?: boolean;
  dry_run?: boolean;
  message?: string;
  commit?: string;
  language?: Language;
  /** Migration: databases named in the text ("база 3 → 7", "database 3 to 7"), source id → target id. */
  db_mappings?: Array<{ source_database_id: number; target_database_id: number }>;
  /** Dataset review: the field named ("поле region"), its new meaning, an answer to the current question. */
  field?: string;
  label?: string;
  answer?: string;
  /** The word that names an unsupported operation. */
  verb?: string;
}

export interface Intent {
  domain: Domain;
  operation: Operation;
  entities: Entities;
  confidence: number;
  risk_level: RiskLevel;
  requires_confirmation: boolean;
}

export type MissingParameter =
  | 'environment'
  | 'source_environment'
  | 'target_environment'
  | 'dashboards'
  | 'datasets'
  | 'query'
  | 'task_id'
  | 'message'
  | 'field'
  | 'label'
  | 'answer';

export interface ParseResult {
  intent: Intent;
  language: Language;
  /** Parameters the operation needs and the text does not give. */
  missing: MissingParameter[];
  /** Keywords read with one wrong letter: [as written, as read]. */
  corrections: Array<[string, string]>;
}

export interface KnownEnvironment {
  id: string;
  name: string;
}

export interface ParseContext {
  environments?: readonly KnownEnvironment[];
}

type Mark =
  | { kind: 'concept'; concept: Concept; typo: boolean; phrase: string }
  | { kind: 'prep'; preps: ReadonlySet<Prep> }
  | { kind: 'filler' }
  | { kind: 'env'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'task_id' }
  | { kind: 'commit' }
  | { kind: 'marker' }
  | { kind: 'lang'; value: Language };

const TASK_ID = /^[a-z_]+-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const COMMIT = /^(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40}$/;
const MAX_ID = 2_147_483_647;
const MAX_ENV_WORDS = 3;

const RISK: Record<Operation, RiskLevel> = {
  capabilities: 'safe',
  list: 'safe',
  search: 'safe',
  status: 'safe',
  logs: 'safe',
  migrate: 'high',
  backup: 'medium',
  generate_docs: 'medium',
  commit: 'medium',
  deploy: 'high',
  show: 'safe',
  // Dataset review writes change Switchyard's session, not Superset.
  set_field: 'medium',
  approve_mappings: 'medium',
  answer: 'medium',
  unsupported: 'safe',
  unknown: 'safe',
};

export function parseCommand(text: string, context: ParseContext = {}): ParseResult {
  const lex = lexicon();
  const tokens = tokenise(text.slice(0, 4000));
  const marks: Array<Mark | undefined> = tokens.map(() => undefined);
  const free = (i: number) => marks[i] === undefined && !tokens[i]!.quoted;

  // 1. Task ids and the caller's environments (exact names or ids, quoted or not).
  const envIndex = new Map<string, string>();
  for (const e of context.environments ?? []) {
    envIndex.set(normaliseText(e.name), e.name);
    envIndex.set(e.id.toLowerCase(), e.name);
  }
  tokens.forEach((t, i) => {
    if (!t.quoted && TASK_ID.test(t.norm)) marks[i] = { kind: 'task_id' };
    else if (t.quoted && envIndex.has(normaliseText(t.raw))) marks[i] = { kind: 'env', value: envIndex.get(normaliseText(t.raw))! };
  });
  for (let n = MAX_ENV_WORDS; n >= 1; n--) {
    for (let i = 0; i + n <= tokens.length; i++) {
      const span = tokens.slice(i, i + n);
      if (!span.every((_, k) => free(i + k))) continue;
      const name = envIndex.get(span.map((t) => t.norm).join(' '));
      if (name) for (let k = 0; k < n; k++) marks[i + k] = k === 0 ? { kind: 'env', value: name } : { kind: 'filler' };
    }
  }

  // 2. Lexicon phrases, longest first, by stem (every case and number form of a word).
  for (let i = 0; i < tokens.length; i++) {
    for (const p of lex.phrases) {
      const n = p.words.length;
      if (i + n > tokens.length) continue;
      let ok = true;
      for (let k = 0; k < n && ok; k++) {
        const t = tokens[i + k]!;
        ok = free(i + k) && (t.stem === p.words[k]!.stem || t.norm === p.words[k]!.norm);
      }
      if (!ok) continue;
      for (let k = 0; k < n; k++)
        marks[i + k] = { kind: 'concept', concept: p.concept, typo: false, phrase: p.words.map((w) => w.norm).join(' ') };
      i += n - 1;
      break;
    }
  }

  // 3. Fillers (phrases first), prepositions, markers, numbers, commits, environment aliases.
  for (let i = 0; i < tokens.length; i++) {
    if (!free(i)) continue;
    const f = lex.fillers.find((words) => words.every((w, k) => i + k < tokens.length && free(i + k) && tokens[i + k]!.norm === w));
    if (f) {
      for (let k = 0; k < f.length; k++) marks[i + k] = { kind: 'filler' };
      i += f.length - 1;
      continue;
    }
    const t = tokens[i]!;
    const preps = lex.preps.get(t.norm);
    if (preps) marks[i] = { kind: 'prep', preps };
    else if (lex.messageMarkers.has(t.norm)) marks[i] = { kind: 'marker' };
    else if (lex.languageMarkers.has(t.norm)) marks[i] = { kind: 'lang', value: lex.languageMarkers.get(t.norm)! };
    else if (/^\d{1,10}$/.test(t.norm) && Number(t.norm) > 0 && Number(t.norm) <= MAX_ID)
      marks[i] = { kind: 'number', value: Number(t.norm) };
    else if (COMMIT.test(t.norm)) marks[i] = { kind: 'commit' };
    else if (lex.envAliases.has(t.norm) || lex.envAliases.has(`stem:${t.stem}`))
      marks[i] = { kind: 'env', value: (lex.envAliases.get(t.norm) ?? lex.envAliases.get(`stem:${t.stem}`))! };
  }

  // 4. Keywords with one wrong, missing or extra letter, or two neighbours swapped. Capitalised
  // words other than the first are names ("Stats"), not keywords.
  const corrections: Array<[string, string]> = [];
  for (let i = 0; i < tokens.length; i++) {
    const t = tokens[i]!;
    const shortest = t.script === 'cyrillic' ? 4 : 5;
    if (!free(i) || t.norm.length < shortest || !/^\p{L}+$/u.test(t.norm)) continue;
    if (i > 0 && /^\p{Lu}/u.test(t.raw)) continue;
    let best: { phrase: (typeof lex.phrases)[number]; d: number } | undefined;
    for (const p of lex.phrases) {
      if (p.words.length !== 1) continue;
      const w = p.words[0]!;
      if (w.norm.length < 4 || Math.abs(w.norm.length - t.norm.length) > 2) continue;
      const d = Math.min(
        distance(t.norm, w.norm),
        swapped(t.norm, w.norm) ? 1 : 9,
        w.stem.length >= 4 && t.stem.length >= 4 && Math.abs(w.stem.length - t.stem.length) <= 1 ? distance(t.stem, w.stem) : 9,
      );
      if (d <= 1 && (!best || d < best.d)) best = { phrase: p, d };
    }
    if (best) {
      marks[i] = { kind: 'concept', concept: best.phrase.concept, typo: true, phrase: best.phrase.words[0]!.norm };
      corrections.push([t.raw, best.phrase.words[0]!.norm]);
    }
  }

  // 5. Language of the question: its keywords decide, else its letters.
  let ru = 0;
  let en = 0;
  tokens.forEach((t, i) => {
    const m = marks[i];
    if (m && m.kind !== 'env' && m.kind !== 'number' && m.kind !== 'task_id' && m.kind !== 'commit') {
      if (t.script === 'cyrillic') ru++;
      else if (t.script === 'latin') en++;
    }
  });
  if (ru === 0 && en === 0) ru = tokens.some((t) => !t.quoted && t.script === 'cyrillic') ? 1 : 0;
  const language: Language = ru >= en && ru > 0 ? 'ru' : 'en';

  // 6. The operation, from the concepts present.
  const concepts = new Set<Concept>();
  let typos = 0;
  marks.forEach((m) => {
    if (m?.kind === 'concept') {
      concepts.add(m.concept);
      if (m.typo) typos++;
    }
  });
  const has = (c: Concept) => concepts.has(c);
  const taskIdIndex = marks.findIndex((m) => m?.kind === 'task_id');
  const hasEntities = taskIdIndex >= 0 || marks.some((m) => m?.kind === 'env' || m?.kind === 'number') || tokens.some((t) => t.quoted);

  let domain = 'unknown' as Domain;
  let operation = 'unknown' as Operation;
  let inferred = false;
  const set = (d: Domain, o: Operation) => {
    domain = d;
    operation = o;
  };
  if (has('unsupported')) set(objectDomain(concepts), 'unsupported');
  else if (has('help') && !hasEntities) set('help', 'capabilities');
  else if (has('answer')) set('dataset_review', 'answer');
  else if (has('approve') && (has('mapping') || has('review'))) set('dataset_review', 'approve_mappings');
  else if (has('field') && (has('means') || has('set'))) set('dataset_review', 'set_field');
  else if (taskIdIndex >= 0 || has('task')) set('tasks', has('logs') ? 'logs' : 'status');
  else if (has('logs')) set('tasks', 'logs');
  else if (has('deploy')) set('git', 'deploy');
  else if (has('commit')) set('git', 'commit');
  else if (has('git') || (has('status') && has('dashboard'))) set('git', 'status');
  else if (has('migrate')) set('dashboards', 'migrate');
  else if (has('backup')) set('dashboards', 'backup');
  else if (has('docs') && !has('dashboard')) set('datasets', 'generate_docs');
  else if (has('review') || has('question') || has('mapping') || (has('field') && !has('dataset') && !has('dashboard')))
    set('dataset_review', 'show');
  else if (has('dataset') || has('dashboard')) {
    set(has('dataset') ? 'datasets' : 'dashboards', has('search') ? 'search' : 'list');
    inferred = !has('search') && !has('list');
  } else if (has('search')) set('dashboards', 'search');
  else if (has('help')) set('help', 'capabilities');

  // 7. Entities, read as the operation needs them.
  const entities: Entities = {};
  const consumed = new Set<number>();

  const prepBefore = (i: number): ReadonlySet<Prep> | undefined => {
    for (let j = i - 1; j >= 0 && j >= i - 3; j--) {
      const m = marks[j];
      if (m?.kind === 'prep') return m.preps;
      if (m?.kind === 'concept' && m.concept === 'environment') continue;
      if (m?.kind === 'filler') continue;
      return undefined;
    }
    return undefined;
  };
  const afterEnvWord = (i: number) => {
    const m = marks[i - 1];
    return m?.kind === 'concept' && m.concept === 'environment';
  };
  const twoEnvs = operation === 'migrate' || operation === 'deploy';
  // Names not known as environments still read as one where the sentence says so: after
  // "environment" / "окружение", or after from / to in a migration or deploy.
  tokens.forEach((t, i) => {
    if (marks[i] !== undefined || (t.quoted && !afterEnvWord(i))) return;
    const p = prepBefore(i);
    if (afterEnvWord(i) || (twoEnvs && p && (p.has('from') || p.has('to')) && t.script !== 'number')) {
      marks[i] = { kind: 'env', value: t.quoted ? t.raw : t.norm };
    }
  });
  const mentions: Array<{ value: string; prep?: ReadonlySet<Prep> }> = [];
  marks.forEach((m, i) => {
    if (m?.kind === 'env') mentions.push({ value: m.value, prep: prepBefore(i) });
  });
  if (twoEnvs) {
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
    if (operation === 'migrate') {
      if (source) entities.source_environment = source;
      if (target) entities.target_environment = target;
    } else {
      if (source ?? target) entities.environment = (source ?? target)!;
      if (target ?? source) entities.target_environment = (target ?? source)!;
    }
  } else if (mentions.length && domain !== 'help' && domain !== 'tasks' && domain !== 'dataset_review') {
    entities.environment = mentions[0]!.value;
  }

  if (taskIdIndex >= 0) entities.task_id = tokens[taskIdIndex]!.norm;
  if (domain === 'tasks' && has('latest') && !entities.task_id) entities.latest = true;

  // "база 3 → 7", "database 3 to 7", "db 3:7": a database mapping of a migration, not dashboards.
  if (operation === 'migrate') {
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
      if (marks[a]?.kind === 'number' && marks[b]?.kind === 'number') {
        pairs.push({
          source_database_id: (marks[a] as { value: number }).value,
          target_database_id: (marks[b] as { value: number }).value,
        });
        consumed.add(a);
        consumed.add(b);
      }
    });
    if (pairs.length) entities.db_mappings = pairs;
  }

  const numbers: number[] = [];
  marks.forEach((m, i) => {
    if (m?.kind === 'number' && !consumed.has(i)) {
      numbers.push(m.value);
      consumed.add(i);
    }
  });

  // Commit message: the quoted text after a marker ("с сообщением «…»"), else the last quoted text.
  const quoted = tokens.map((t, i) => (t.quoted && marks[i] === undefined ? i : -1)).filter((i) => i >= 0);
  if (operation === 'commit') {
    let msg = quoted.find((i) => marks[i - 1]?.kind === 'marker' || (marks[i - 1]?.kind === 'filler' && marks[i - 2]?.kind === 'marker'));
    if (msg === undefined && quoted.length) msg = quoted[quoted.length - 1];
    if (msg === undefined) {
      // Unquoted: everything after the marker.
      const m = marks.findIndex((x) => x?.kind === 'marker');
      if (m >= 0 && m + 1 < tokens.length) {
        entities.message = text.slice(tokens[m + 1]!.start, tokens[tokens.length - 1]!.end).trim();
        for (let k = m + 1; k < tokens.length; k++) consumed.add(k);
      }
    } else {
      entities.message = tokens[msg]!.raw;
      consumed.add(msg);
    }
  }
  if (operation === 'deploy') {
    const c = marks.findIndex((m) => m?.kind === 'commit');
    if (c >= 0) entities.commit = tokens[c]!.norm;
  }

  // Titles, slugs, table names or a search text: quoted tokens, and runs of unmarked words.
  const refs: string[] = [];
  let run: Token[] = [];
  const flush = () => {
    if (run.length) refs.push(text.slice(run[0]!.start, run[run.length - 1]!.end));
    run = [];
  };
  tokens.forEach((t, i) => {
    if (consumed.has(i)) return flush();
    if (t.quoted && marks[i] === undefined) {
      flush();
      refs.push(t.raw);
    } else if (marks[i] === undefined) run.push(t);
    else flush();
  });
  flush();

  if (domain === 'dashboards' || domain === 'datasets' || domain === 'git') {
    const key = domain === 'datasets' ? 'datasets' : 'dashboards';
    if (operation === 'list' || operation === 'search') {
      if (refs.length) {
        entities.query = refs.join(' ');
        operation = 'search';
      }
      if (numbers.length && !entities.query) {
        entities.query = numbers.join(' ');
        operation = 'search';
      }
    } else if (operation !== 'unsupported') {
      const objects: ObjectRef[] = [...numbers, ...refs];
      if (objects.length) entities[key] = [...new Set(objects)];
    }
  }
  if (operation === 'set_field' || operation === 'answer') Object.assign(entities, reviewEntities(text, tokens, marks, operation));
  if (operation === 'migrate' && has('dry_run')) entities.dry_run = true;
  if (operation === 'migrate' && !has('dry_run')) entities.dry_run = false;
  if (operation === 'generate_docs') entities.language = marks.find((m) => m?.kind === 'lang')?.value ?? language;
  if (operation === 'unsupported') {
    const i = marks.findIndex((m) => m?.kind === 'concept' && m.concept === 'unsupported');
    entities.verb = tokens[i]!.norm;
  }

  const missing = missingFor(domain, operation, entities);
  const risk = RISK[operation];
  const confidence =
    operation === 'unknown'
      ? 0
      : Math.max(0.5, Math.round((1 - 0.1 * typos - (inferred ? 0.15 : 0) - (missing.length ? 0.1 : 0)) * 100) / 100);
  return {
    intent: {
      domain,
      operation,
      entities,
      confidence,
      risk_level: operation === 'migrate' && entities.dry_run ? 'low' : risk,
      requires_confirmation: (risk === 'medium' || risk === 'high') && !(operation === 'migrate' && entities.dry_run),
    },
    language,
    missing,
    corrections,
  };
}

/**
 * A field and its meaning ("поле region означает регион продаж", "set field region to Sales
 * region"): the word after "field" is the field, whatever it reads as; the text after it, past
 * "means" / "to" / fillers, is the meaning, verbatim. An answer is the text after "answer".
 */
function reviewEntities(text: string, tokens: Token[], marks: Array<Mark | undefined>, operation: Operation): Entities {
  const isConcept = (i: number, c: Concept) => {
    const m = marks[i];
    return m?.kind === 'concept' && m.concept === c;
  };
  // A meaning may begin with a filler word ("название товара"); an answer's "is" is skipped.
  const skippable = (i: number) => {
    const m = marks[i];
    if (tokens[i]!.quoted) return false;
    if (m?.kind === 'filler') return operation === 'answer';
    return m?.kind === 'prep' || (m?.kind === 'concept' && (m.concept === 'means' || m.concept === 'set'));
  };
  const rest = (from: number): string | undefined => {
    let j = from;
    while (j < tokens.length && skippable(j)) j++;
    if (j >= tokens.length) return undefined;
    if (j === tokens.length - 1 && tokens[j]!.quoted) return tokens[j]!.raw;
    const value = text
      .slice(tokens[j]!.start, tokens[tokens.length - 1]!.end)
      .trim()
      .replace(/[.!?;,]+$/u, '');
    return value || undefined;
  };
  if (operation === 'answer') {
    const a = tokens.findIndex((_, i) => isConcept(i, 'answer'));
    const answer = rest(a + 1);
    return answer ? { answer } : {};
  }
  const f = tokens.findIndex((_, i) => isConcept(i, 'field'));
  let k = f + 1;
  while (k < tokens.length && (marks[k]?.kind === 'filler' || marks[k]?.kind === 'prep') && !tokens[k]!.quoted) k++;
  if (f < 0 || k >= tokens.length) return {};
  const out: Entities = { field: tokens[k]!.raw };
  const label = rest(k + 1);
  if (label) out.label = label;
  return out;
}

/** Two neighbouring letters swapped ("lsit" for "list"). */
function swapped(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  const diff: number[] = [];
  for (let i = 0; i < a.length && diff.length <= 2; i++) if (a[i] !== b[i]) diff.push(i);
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!];
}

function objectDomain(concepts: Set<Concept>): Domain {
  if (concepts.has('task')) return 'tasks';
  if (concepts.has('git') || concepts.has('commit')) return 'git';
  if (concepts.has('dataset')) return 'datasets';
  if (concepts.has('dashboard')) return 'dashboards';
  return 'unknown';
}

/** What each operation needs before it can run (git status and logs differ from the task ones). */
const REQUIRED: Partial<Record<Operation, Array<MissingParameter>>> = {
  list: ['environment'],
  search: ['environment', 'query'],
  status: ['environment', 'dashboards'],
  logs: ['environment', 'dashboards'],
  migrate: ['source_environment', 'target_environment', 'dashboards'],
  backup: ['environment', 'dashboards'],
  generate_docs: ['environment', 'datasets'],
  commit: ['environment', 'dashboards', 'message'],
  deploy: ['environment', 'dashboards'],
  set_field: ['field', 'label'],
  answer: ['answer'],
};

const ENTITY_OF: Record<MissingParameter, (e: Entities) => unknown> = {
  environment: (e) => e.environment,
  query: (e) => e.query,
  task_id: (e) => e.task_id || e.latest,
  source_environment: (e) => e.source_environment,
  target_environment: (e) => e.target_environment,
  dashboards: (e) => e.dashboards,
  datasets: (e) => e.datasets,
  message: (e) => e.message,
  field: (e) => e.field,
  label: (e) => e.label,
  answer: (e) => e.answer,
};

function missingFor(domain: Domain, operation: Operation, e: Entities): MissingParameter[] {
  const required =
    domain === 'tasks' && (operation === 'status' || operation === 'logs')
      ? (['task_id'] as MissingParameter[])
      : (REQUIRED[operation] ?? []);
  return required.filter((p) => {
    const v = ENTITY_OF[p](e);
    return !v || (Array.isArray(v) && v.length === 0);
  });
}
