/**
 * Every host a dashboard's files reference, with where: database connection hosts (a dataset's
 * database, `sqlalchemy_uri`), and every http(s) URL in any string (markdown, iframes, images,
 * external links, chart parameters). A release is only as trusted as the least trusted of these.
 */
import { fromYaml } from '../git/dashboard-files.ts';

export interface FoundHost {
  host: string;
  role: 'database' | 'url';
  where: string;
}

const URL_PATTERN = /\b(?:https?|wss?|ftp):\/\/([^\s/?#"'<>\\)\]]+)/gi;

/** The host of a SQLAlchemy URI (`dialect+driver://user:pass@host:port/db`), or null for file-based ones (sqlite). */
export function databaseHost(uri: string): string | null {
  const m = /^[a-z0-9+_.-]+:\/\/(?:[^@/]*@)?(\[[^\]]+\]|[^:/?#]*)/i.exec(uri.trim());
  const host = m?.[1]?.replace(/^\[|\]$/g, '').toLowerCase() ?? '';
  return host ? host : null;
}

function hostOfAuthority(authority: string): string | null {
  const noUser = authority.includes('@') ? authority.slice(authority.lastIndexOf('@') + 1) : authority;
  const host = noUser.startsWith('[') ? noUser.slice(1, noUser.indexOf(']')) : noUser.split(':')[0];
  return host ? host.toLowerCase().replace(/\.$/, '') : null;
}

/** The hosts of the URLs in a text. */
export function urlHosts(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(URL_PATTERN)) {
    const h = hostOfAuthority(m[1]);
    if (h) out.push(h);
  }
  return out;
}

function walk(value: unknown, path: string, visit: (text: string, path: string) => void): void {
  if (typeof value === 'string') {
    visit(value, path);
    // JSON held in strings (position, json_metadata, params) is searched as text: a URL is a URL wherever it sits.
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => walk(v, `${path}[${i}]`, visit));
  } else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) walk(v, path ? `${path}.${k}` : k, visit);
  }
}

/** The hosts in a dashboard's files (path → YAML text), each occurrence once. */
export function hostsInFiles(files: Map<string, string> | Record<string, string>): FoundHost[] {
  const seen = new Set<string>();
  const found: FoundHost[] = [];
  const add = (f: FoundHost) => {
    const key = `${f.role}\0${f.host}\0${f.where}`;
    if (!seen.has(key)) {
      seen.add(key);
      found.push(f);
    }
  };
  const entries = files instanceof Map ? [...files] : Object.entries(files);
  for (const [path, text] of entries.sort(([a], [b]) => a.localeCompare(b))) {
    if (path === 'metadata.yaml') continue;
    const content = fromYaml(text);
    if (path.startsWith('databases/') && typeof content.sqlalchemy_uri === 'string') {
      const host = databaseHost(content.sqlalchemy_uri);
      if (host) add({ host, role: 'database', where: `${path}: sqlalchemy_uri` });
    }
    walk(content, '', (s, at) => {
      if (at === 'sqlalchemy_uri') return;
      for (const host of urlHosts(s)) add({ host, role: 'url', where: `${path}: ${at}` });
    });
  }
  return found;
}

/**
 * Is the host in the registry? An entry is an exact host name, or `*.example.com` for any host
 * below that domain (not the domain itself, as in TLS certificates).
 */
export function isTrusted(host: string, registry: readonly string[]): boolean {
  const h = host.toLowerCase();
  return registry.some((entry) => {
    const e = entry.toLowerCase().trim();
    if (e.startsWith('*.')) return h.endsWith(e.slice(1)) && h.length > e.length - 1;
    return e === h;
  });
}
