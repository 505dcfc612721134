/**
 * The language of a command and its operation, from the marks: the keywords decide the language
 * (else the letters), and the set of concepts found decides the operation by the first rule that
 * matches (an ordered table: the unsupported verbs first, the bare nouns last).
 */
import type { Domain, Language, Operation } from './intent.ts';
import type { Concept } from './lexicon.ts';
import type { Sentence } from './marks.ts';

/** Keywords decide: more Cyrillic ones than Latin is Russian; none at all, any Cyrillic word outside quotes. */
export function languageOf(s: Sentence): Language {
  let ru = 0;
  let en = 0;
  s.tokens.forEach((t, i) => {
    const m = s.marks[i];
    if (m && m.kind !== 'env' && m.kind !== 'number' && m.kind !== 'task_id' && m.kind !== 'commit') {
      if (t.script === 'cyrillic') ru++;
      else if (t.script === 'latin') en++;
    }
  });
  if (ru === 0 && en === 0) ru = s.tokens.some((t) => !t.quoted && t.script === 'cyrillic') ? 1 : 0;
  return ru >= en && ru > 0 ? 'ru' : 'en';
}

export interface Reading {
  domain: Domain;
  operation: Operation;
  /** The operation was inferred without a verb ("дашборды в dev"): less confidence. */
  inferred: boolean;
  concepts: ReadonlySet<Concept>;
  /** Keywords read with a wrong letter. */
  typos: number;
}

interface Clues {
  has(c: Concept): boolean;
  concepts: ReadonlySet<Concept>;
  /** A task id, an environment, a number or a quoted name: "help" with one of these is not a help question. */
  hasEntities: boolean;
  hasTaskId: boolean;
}

type Found = Pick<Reading, 'domain' | 'operation'> & { inferred?: boolean };
const op = (domain: Domain, operation: Operation): Found => ({ domain, operation });

/** In order; the first that matches decides. */
const RULES: ReadonlyArray<readonly [(c: Clues) => boolean, (c: Clues) => Found]> = [
  // "открой PR для дашборда Sales": before the unsupported words, since "pull request" holds "pull".
  [(c) => c.has('pull_request'), () => op('git', 'open_pr')],
  [(c) => c.has('unsupported'), (c) => op(objectDomain(c.concepts), 'unsupported')],
  [(c) => c.has('help') && !c.hasEntities, () => op('help', 'capabilities')],
  [(c) => c.has('answer'), () => op('dataset_review', 'answer')],
  [(c) => c.has('approve') && (c.has('mapping') || c.has('review')), () => op('dataset_review', 'approve_mappings')],
  [(c) => c.has('field') && (c.has('means') || c.has('set')), () => op('dataset_review', 'set_field')],
  [(c) => c.hasTaskId || c.has('task'), (c) => op('tasks', c.has('logs') ? 'logs' : 'status')],
  [(c) => c.has('logs'), () => op('tasks', 'logs')],
  [(c) => c.has('deploy'), () => op('git', 'deploy')],
  [(c) => c.has('commit'), () => op('git', 'commit')],
  [(c) => c.has('git') || (c.has('status') && c.has('dashboard')), () => op('git', 'status')],
  [(c) => c.has('migrate'), () => op('dashboards', 'migrate')],
  [(c) => c.has('backup'), () => op('dashboards', 'backup')],
  [(c) => c.has('docs') && !c.has('dashboard'), () => op('datasets', 'generate_docs')],
  // "проверь прод", "validate prod": the content validator, a task that only reads.
  [(c) => c.has('validate'), () => op('dashboards', 'validate')],
  // "what uses video_game_sales", "что использует video_game_sales": the impact of a change, read-only.
  [(c) => c.has('uses'), () => op('datasets', 'impact')],
  [
    (c) => c.has('review') || c.has('question') || c.has('mapping') || (c.has('field') && !c.has('dataset') && !c.has('dashboard')),
    () => op('dataset_review', 'show'),
  ],
  [
    (c) => c.has('dataset') || c.has('dashboard'),
    (c) => ({
      domain: c.has('dataset') ? 'datasets' : 'dashboards',
      operation: c.has('search') ? 'search' : 'list',
      inferred: !c.has('search') && !c.has('list'),
    }),
  ],
  [(c) => c.has('search'), () => op('dashboards', 'search')],
  [(c) => c.has('help'), () => op('help', 'capabilities')],
];

export function classify(s: Sentence): Reading {
  const concepts = new Set<Concept>();
  let typos = 0;
  s.marks.forEach((m) => {
    if (m?.kind === 'concept') {
      concepts.add(m.concept);
      if (m.typo) typos++;
    }
  });
  const hasTaskId = s.marks.some((m) => m?.kind === 'task_id');
  const clues: Clues = {
    has: (c) => concepts.has(c),
    concepts,
    hasTaskId,
    hasEntities: hasTaskId || s.marks.some((m) => m?.kind === 'env' || m?.kind === 'number') || s.tokens.some((t) => t.quoted),
  };
  const rule = RULES.find(([when]) => when(clues));
  const found = rule ? rule[1](clues) : op('unknown', 'unknown');
  return { ...found, inferred: found.inferred ?? false, concepts, typos };
}

/** The domain an unsupported verb's object names ("удали задачу": tasks). */
function objectDomain(concepts: ReadonlySet<Concept>): Domain {
  if (concepts.has('task')) return 'tasks';
  if (concepts.has('git') || concepts.has('commit')) return 'git';
  if (concepts.has('dataset')) return 'datasets';
  if (concepts.has('dashboard')) return 'dashboards';
  return 'unknown';
}
