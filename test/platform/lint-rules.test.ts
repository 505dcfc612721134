import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { detached, fallbackLogged } from '../../lib/detached.ts';

/**
 * The project's own lint rule (lint/rules/no-swallowed-errors.js, docs/layout.md "Lint") run by
 * ESLint's real Linter on small sources: each swallowing form is reported (so the rule can fail),
 * each handled form is not; the lint configuration turns it on where the product's work runs; and
 * lib/detached.ts, the one way to leave a promise un-awaited, logs a failure under its label.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const LINT = path.join(ROOT, 'lint');

interface LintMessage {
  ruleId: string | null;
  line: number;
}
interface LinterLike {
  verify(code: string, config: unknown[], filename: string): LintMessage[];
}

async function linted(code: string): Promise<LintMessage[]> {
  const { Linter } = (await import(pathToFileURL(path.join(LINT, 'node_modules/eslint/lib/api.js')).href)) as {
    Linter: new () => LinterLike;
  };
  const rule = ((await import(pathToFileURL(path.join(LINT, 'rules/no-swallowed-errors.js')).href)) as { default: unknown }).default;
  const tseslint = (
    (await import(pathToFileURL(path.join(LINT, 'node_modules/typescript-eslint/dist/index.js')).href)) as {
      default: { parser: unknown };
    }
  ).default;
  const config = [
    {
      files: ['**/*.ts'],
      languageOptions: { parser: tseslint.parser },
      plugins: { switchyard: { rules: { 'no-swallowed-errors': rule } } },
      rules: { 'switchyard/no-swallowed-errors': 'error' },
    },
  ];
  return new Linter().verify(code, config, 'sample.ts').filter((m) => m.ruleId === 'switchyard/no-swallowed-errors');
}

/** A rule's severity as ESLint's calculated configuration gives it (`[2, ...options]`). */
function severity(entry: unknown): unknown {
  return Array.isArray(entry) ? entry[0] : entry;
}

describe('no swallowed errors', () => {
  it('reports every form that drops an error', async () => {
    const swallowed = [
      'p.catch(() => undefined);',
      'p.catch(() => null);',
      'p.catch((err) => null);',
      'p.then((v) => v, () => false);',
      'try { f(); } catch {}',
      'try { f(); } catch { return null; }',
      'try { f(); } catch (err) { g(); }',
      // A comment that does not say the failure is expected is not enough.
      'try { f(); } catch {\n  // why not\n}',
    ];
    for (const code of swallowed) expect(await linted(`async function x(p: Promise<unknown>) {\n${code}\n}`), code).toHaveLength(1);
  });

  it('accepts an error used, rethrown, or marked expected with a reason', async () => {
    const handled = [
      'p.catch((err) => log.warn(String(err)));',
      'p.catch((err: unknown) => { throw new Error(String(err)); });',
      'try { f(); } catch (err) { log.warn(`${item}: ${String(err)}`); }',
      'try { f(); } catch (err) { if (!gone(err)) throw err; }',
      'try { f(); } catch {\n  throw new Error("wrapped");\n}',
      'try { f(); } catch {\n  // expected: the file may not exist yet\n  return null;\n}',
      '// expected: the reader awaiting p meets the error; this only forgets it\np.catch(() => undefined);',
      'p.then(\n  (v) => v,\n  // expected: a joint read that failed leaves each item to its own read\n  () => null,\n);',
    ];
    for (const code of handled) expect(await linted(`async function x(p: Promise<unknown>) {\n${code}\n}`), code).toEqual([]);
  });

  it('is on in activities/, lib/ and db/ (and domain/), and the promise rules are on everywhere linted', async () => {
    const { ESLint } = (await import(pathToFileURL(path.join(LINT, 'node_modules/eslint/lib/api.js')).href)) as {
      ESLint: new (o: object) => { calculateConfigForFile(f: string): Promise<{ rules: Record<string, unknown> }> };
    };
    const eslint = new ESLint({ cwd: ROOT, overrideConfigFile: path.join(LINT, 'eslint.config.js') });
    for (const file of ['domain/migration/batch.ts', 'lib/detached.ts', 'db/knex.ts']) {
      const { rules } = await eslint.calculateConfigForFile(path.join(ROOT, file));
      expect(severity(rules['switchyard/no-swallowed-errors']), file).toBe(2);
      expect(severity(rules['@typescript-eslint/no-misused-promises']), file).toBe(2);
      const floating = rules['@typescript-eslint/no-floating-promises'] as [number, { ignoreVoid?: boolean }];
      expect(floating[0], file).toBe(2);
      expect(floating[1].ignoreVoid, file).toBe(false);
    }
    const { rules } = await eslint.calculateConfigForFile(path.join(ROOT, 'api/app.ts'));
    expect(rules['switchyard/no-swallowed-errors']).toBeUndefined();
  });
});

describe('detached work', () => {
  it('logs a failure under its label, and nothing when the work succeeds', async () => {
    const lines: string[] = [];
    const log = { warn: (m: string) => lines.push(m) };
    const failing = Promise.reject(new Error('the target answered 502'));
    detached('dashboard 12: target checks ahead', failing, log);
    detached('dashboard 13: target checks ahead', Promise.resolve('fine'), log);
    await Promise.allSettled([failing]);
    await Promise.resolve();
    expect(lines).toEqual(['dashboard 12: target checks ahead failed: the target answered 502']);
  });

  it('a fallback read is logged with its label and answers the fallback', async () => {
    const lines: string[] = [];
    const got = await fallbackLogged("task t: the target's release", Promise.reject(new Error('timed out')), null, {
      warn: (m: string) => lines.push(m),
    });
    expect(got).toBeNull();
    expect(lines).toEqual(["task t: the target's release failed: timed out"]);
  });
});
