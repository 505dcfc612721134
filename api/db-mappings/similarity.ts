/**
 * How alike two database connections of different environments are: the same uuid (a database
 * created by an earlier import keeps the source's uuid) wins; otherwise name similarity (with
 * environment words such as dev/test/prod ignored) weighted 0.7 and the SQLAlchemy backend 0.3.
 */
export interface DatabaseSide {
  id: number;
  name: string;
  uuid: string | null;
  backend: string | null;
}

export interface MatchScore {
  confidence: number;
  same_uuid: boolean;
  name_similarity: number;
  /** null when either backend is unknown. */
  same_backend: boolean | null;
}

const ENV_WORDS = new Set([
  'dev',
  'develop',
  'development',
  'test',
  'testing',
  'tst',
  'qa',
  'uat',
  'stage',
  'staging',
  'stg',
  'prod',
  'production',
  'prd',
  'preprod',
  'pre',
  'live',
  'sandbox',
  'sbx',
  'local',
  'copy',
  'new',
  'old',
]);

export function nameTokens(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

function coreTokens(name: string): string[] {
  const all = nameTokens(name);
  const core = all.filter((t) => !ENV_WORDS.has(t) && !/^(v)?\d+$/.test(t));
  return core.length ? core : all;
}

function levenshtein(a: string, b: string): number {
  if (a === b) return 0;
  if (!a.length) return b.length;
  if (!b.length) return a.length;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length];
}

/** 0..1: 1 for the same core name (case, separators and environment words ignored). */
export function nameSimilarity(a: string, b: string): number {
  const ta = coreTokens(a);
  const tb = coreTokens(b);
  const ja = ta.join('');
  const jb = tb.join('');
  if (!ja || !jb) return 0;
  if (ja === jb) return 1;
  const edit = 1 - levenshtein(ja, jb) / Math.max(ja.length, jb.length);
  const sa = new Set(ta);
  const sb = new Set(tb);
  const inter = [...sa].filter((t) => sb.has(t)).length;
  const jaccard = inter / new Set([...sa, ...sb]).size;
  return Math.max(0, Math.min(1, Math.max(edit, jaccard)));
}

export function scoreMatch(source: DatabaseSide, target: DatabaseSide): MatchScore {
  const sameUuid = !!source.uuid && !!target.uuid && source.uuid.toLowerCase() === target.uuid.toLowerCase();
  const sim = nameSimilarity(source.name, target.name);
  const sameBackend = source.backend && target.backend ? source.backend.toLowerCase() === target.backend.toLowerCase() : null;
  const backendScore = sameBackend === null ? 0.5 : sameBackend ? 1 : 0;
  const confidence = sameUuid ? 1 : Math.round((0.7 * sim + 0.3 * backendScore) * 1000) / 1000;
  return { confidence, same_uuid: sameUuid, name_similarity: Math.round(sim * 1000) / 1000, same_backend: sameBackend };
}

/** Below this, no target is suggested (the candidates are still listed). */
export const SUGGESTION_THRESHOLD = 0.5;
