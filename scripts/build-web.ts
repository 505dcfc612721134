import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Builds the web console into web/dist (`npm run build:web`, run by `npm install` after the
 * client types). With `--if-stale` (as `npm start` runs it) it builds only when web/dist is
 * missing or older than a source of the console or of the client it is typed against.
 */
const repo = fileURLToPath(new URL('..', import.meta.url));
const dist = path.join(repo, 'web', 'dist', 'index.html');
const sources = [path.join(repo, 'web'), path.join(repo, 'client')];

function newest(dir: string): number {
  let latest = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'dist' || entry.name === 'node_modules') continue;
    const p = path.join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(p) : fs.statSync(p).mtimeMs);
  }
  return latest;
}

export async function buildWeb(opts: { ifStale?: boolean } = {}): Promise<boolean> {
  if (opts.ifStale) {
    const built = fs.statSync(dist, { throwIfNoEntry: false })?.mtimeMs ?? 0;
    if (built >= Math.max(...sources.map(newest))) return false;
  }
  const { build } = await import('vite');
  await build({ configFile: path.join(repo, 'web', 'vite.config.ts'), logLevel: 'warn' });
  return true;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await buildWeb({ ifStale: process.argv.includes('--if-stale') });
  process.stdout.write(built ? 'web console built into web/dist\n' : 'web console is up to date\n');
}
