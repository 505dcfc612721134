import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The domain layer's rules in .dependency-cruiser.cjs (docs/layout.md, "Domains"), run by the
 * project's own dependency-cruiser with the project's own configuration over a small tree that
 * breaks each rule once beside imports that keep it: every break is reported (so the rules can
 * fail) and nothing else is. `npm run lint:imports` holds the real tree to the same rules.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);

const TREE: Record<string, string> = {
  'domain/shop/index.ts': "export { price } from './price.ts';\n",
  'domain/shop/price.ts': "import { rate } from './tax/rate.ts';\nexport const price = (n: number) => n * rate;\n",
  'domain/shop/tax/rate.ts': 'export const rate = 1.2;\n',
  'domain/stock/index.ts': "import { price } from '../shop/index.ts';\nexport const worth = price(1);\n",
  'domain/stock/deep.ts': "import { rate } from '../shop/tax/rate.ts';\nexport const taxed = rate;\n",
  'activities/sell.ts': "import { price } from '../domain/shop/index.ts';\nexport const sold = price(2);\n",
  'activities/sell-deep.ts': "import { price } from '../domain/shop/price.ts';\nexport const sold = price(3);\n",
  'api/route.ts': "import { worth } from '../domain/stock/index.ts';\nexport const shown = worth;\n",
  'worker/main.ts': "import { sold } from '../activities/sell.ts';\nexport const started = sold;\n",
  'domain/shop/uses-activity.ts': "import { sold } from '../../activities/sell.ts';\nexport const back = sold;\n",
  'lib/superset/client.ts': 'export class SupersetClient {}\n',
  'db/store.ts': "import type { SupersetClient } from '../lib/superset/client.ts';\nexport type Writer = SupersetClient;\n",
  'tsconfig.json': JSON.stringify({
    compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', allowImportingTsExtensions: true },
  }),
};

interface Violation {
  from: string;
  to: string;
  rule: { name: string };
}

let dir: string;
let violations: string[];

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'front-door-'));
  for (const [file, text] of Object.entries(TREE)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
  const bin = path.join(ROOT, 'node_modules/.bin/depcruise');
  const args = [
    '--config',
    path.join(ROOT, '.dependency-cruiser.cjs'),
    '--output-type',
    'json',
    'domain',
    'activities',
    'api',
    'worker',
    'db',
    'lib',
  ];
  // With some output types dependency-cruiser exits 1 on violations: the JSON on stdout is the answer either way.
  const out = await run(bin, args, { cwd: dir, maxBuffer: 16 * 1024 * 1024 }).catch((err: unknown) => {
    const e = err as { code?: number; stdout?: string };
    if (e.code === 1 && e.stdout) return { stdout: e.stdout };
    throw err;
  });
  const result = JSON.parse(out.stdout) as { summary: { violations: Violation[] } };
  violations = result.summary.violations.map((v) => `${v.rule.name}: ${v.from} → ${v.to}`).sort();
}, 60_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the domain layer and its front doors', () => {
  it('reports each break once and nothing else', () => {
    expect(violations).toEqual([
      'db-no-superset: db/store.ts → lib/superset/client.ts',
      'domain-front-door-between-domains: domain/stock/deep.ts → domain/shop/tax/rate.ts',
      'domain-front-door: activities/sell-deep.ts → domain/shop/price.ts',
      'domain-imports: domain/shop/uses-activity.ts → activities/sell.ts',
    ]);
  });

  it('lets a domain reach deep inside itself, and others through its index.ts', () => {
    const involving = (file: string) => violations.filter((v) => v.includes(file));
    expect(involving('domain/shop/price.ts').map((v) => v.split(':')[0])).toEqual(['domain-front-door']);
    expect(involving('domain/stock/index.ts')).toEqual([]);
    expect(involving('api/route.ts')).toEqual([]);
    expect(involving('worker/main.ts')).toEqual([]);
  });
});
