import fs from 'node:fs';
import path from 'node:path';
import type { Config } from './config.ts';

/**
 * `npm start` / `npm run infra` record where the embedded PostgreSQL and Temporal listen, so
 * `npm run api` and `npm run worker` started alone find them without extra configuration.
 */
export interface StackFile {
  databaseUrl: string;
  temporalAddress: string;
  temporalUiUrl?: string;
}

function file(config: Config): string {
  return path.join(config.SWITCHYARD_DATA_DIR, 'stack.json');
}

export function writeStackFile(config: Config, stack: StackFile): void {
  fs.mkdirSync(config.SWITCHYARD_DATA_DIR, { recursive: true });
  fs.writeFileSync(file(config), JSON.stringify(stack, null, 2), { mode: 0o600 });
}

export function resolveDatabaseUrl(config: Config): string {
  if (config.DATABASE_URL) return config.DATABASE_URL;
  const f = file(config);
  if (fs.existsSync(f)) return (JSON.parse(fs.readFileSync(f, 'utf8')) as StackFile).databaseUrl;
  throw new Error(
    `DATABASE_URL is not set and no embedded stack is recorded in ${f}: set DATABASE_URL, or run \`npm start\` (or \`npm run infra\`) first`,
  );
}
