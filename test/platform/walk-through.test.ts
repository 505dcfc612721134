// docs/walk-through.md, run as written (issue 33): every `sh` block in order against the real
// stack it starts itself (`npm start`: embedded PostgreSQL, the Temporal dev server, the API and
// its worker; `npm run superset:demo`: two real Superset 6.1.0), each block's exit status and the
// lines of the `text` block after it checked. The page is read with a Markdown parser each run, so
// a changed command is the command run. The only change made to the page's text: the default
// addresses (127.0.0.1:8080, :8088, :8089) become free ports of this run, and the stack's other
// ports and data directories are set through the environment, so a person's own stack on the
// defaults is left alone. SWITCHYARD_WALK_THROUGH_DOC names another page (to see a broken one fail).
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../lib/embedded/free-port.ts';
import { PROJECT_ROOT } from '../../lib/config.ts';
import { buildWeb } from '../../scripts/build-web.ts';
import { Background, missingLines, runScript, stepsOf, type DocStep, type Shell } from '../support/doc-commands.ts';

const DOC = process.env.SWITCHYARD_WALK_THROUGH_DOC || path.join(PROJECT_ROOT, 'docs/walk-through.md');
const off = (v: string | undefined) => /^(off|0|false|no)$/i.test(v ?? '');
// The page starts real Supersets of its own; without Superset (SWITCHYARD_TEST_SUPERSET=off) it is
// skipped like the other end-to-end tests, unless SWITCHYARD_TEST_WALK_THROUGH=on asks for it.
const enabled = process.env.SWITCHYARD_TEST_WALK_THROUGH
  ? !off(process.env.SWITCHYARD_TEST_WALK_THROUGH)
  : !off(process.env.SWITCHYARD_TEST_SUPERSET);

describe('reading a page: the shell blocks, their expected output, the match', () => {
  const page = [
    'Intro.',
    '```sh stays-running',
    'server --port 8080',
    '```',
    '```text',
    '  listening   on 8080',
    '```',
    '1. In a list:',
    '   ```sh',
    '   echo one',
    '   ```',
    '```js',
    'not a command',
    '```',
    '```text',
    'output of no sh block',
    '```',
  ].join('\n');

  it('takes sh blocks in order, nested ones too, a text block right after one as its output, and nothing else', () => {
    expect(stepsOf(page)).toEqual([
      { script: 'server --port 8080', staysRunning: true, expect: ['listening on 8080'] },
      { script: 'echo one', staysRunning: false, expect: [] },
    ]);
  });

  it('matches expected lines in order, blanks collapsed, … for what differs', () => {
    const out = 'task migration-4b1f started\n\u001b[32m│ ✓ │ 1  │ Sales │\u001b[0m\nmigration migration-4b1f  SUCCEEDED\n';
    expect(missingLines(out, ['task migration-… started', '│ ✓ │ 1 │ Sales │', 'migration … SUCCEEDED'])).toEqual([]);
    expect(missingLines(out, ['migration … SUCCEEDED', 'task migration-… started'])).toEqual(['task migration-… started']);
    expect(missingLines(out, ['│ ✗ │ 1 │ Sales │'])).toEqual(['│ ✗ │ 1 │ Sales │']);
  });

  it('runs a block with bash -e -o pipefail: a failing command fails the block', async () => {
    const shell = { cwd: os.tmpdir(), env: process.env };
    expect(await runScript('false | cat\necho after', shell)).toEqual({ code: 1, output: '' });
    expect(await runScript('echo "$((1 + 1))"', shell)).toEqual({ code: 0, output: '2\n' });
  });
});

/** Free ports for the page's default addresses and the stack's others; a data directory apart. */
async function stackShell(dir: string): Promise<{ shell: Shell; addresses: Map<string, string>; ports: number[] }> {
  const [api, dev, prod, pg, temporal, ui] = await Promise.all(Array.from({ length: 6 }, () => freePort()));
  const env: NodeJS.ProcessEnv = {};
  // Nothing of this test run's own settings: an API key or URL in the environment would override the CLI's login.
  for (const [k, v] of Object.entries(process.env)) {
    if (
      !/^(SWITCHYARD_|TEMPORAL_|SUPERSET_DEMO_|DATABASE_URL$|PORT$|HOST$|EMBEDDED_POSTGRES_PORT$|LOG_|OTEL_|METRICS_|WORKER_METRICS_)/.test(
        k,
      )
    )
      env[k] = v;
  }
  Object.assign(env, {
    SWITCHYARD_DATA_DIR: path.join(dir, 'data'),
    EMBEDDED_POSTGRES_PORT: String(pg),
    TEMPORAL_PORT: String(temporal),
    TEMPORAL_UI_PORT: String(ui),
    PORT: String(api),
    SUPERSET_DEMO_DATA: path.join(dir, 'superset-demo'),
    SUPERSET_DEMO_DEV_PORT: String(dev),
    SUPERSET_DEMO_PROD_PORT: String(prod),
    XDG_CONFIG_HOME: path.join(dir, 'config'),
  });
  const addresses = new Map([
    ['127.0.0.1:8080', `127.0.0.1:${api}`],
    ['127.0.0.1:8088', `127.0.0.1:${dev}`],
    ['127.0.0.1:8089', `127.0.0.1:${prod}`],
  ]);
  return { shell: { cwd: PROJECT_ROOT, env }, addresses, ports: [api, dev, prod, pg, temporal, ui] };
}

/** Whether something accepts connections on the port (a refused connection: nothing does). */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

function readSteps(addresses: Map<string, string>): DocStep[] {
  const at = (text: string) => [...addresses].reduce((t, [from, to]) => t.replaceAll(from, to), text);
  return stepsOf(readFileSync(DOC, 'utf8')).map((s) => ({ ...s, script: at(s.script), expect: s.expect.map(at) }));
}

describe.skipIf(!enabled)(`${path.relative(PROJECT_ROOT, DOC)}, run as written`, () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'switchyard-walk-'));
  // The embedded PostgreSQL runs as the postgres user when the tests run as root: it must reach the data dir.
  chmodSync(dir, 0o755);
  const background: Background[] = [];
  let shell: Shell;
  let ports: number[] = [];
  let steps: DocStep[] = [];
  let broken: string | undefined;

  beforeAll(async () => {
    // As the browser tests do (test/web/browser.ts): a stale web/dist is rebuilt here, once, not by
    // `npm start` in the middle of the page while other files' browsers load it.
    await buildWeb({ ifStale: true });
    const stack = await stackShell(dir);
    shell = stack.shell;
    ports = stack.ports;
    steps = readSteps(stack.addresses);
  });

  afterAll(async () => {
    await Promise.all(background.map((b) => b.stop()));
    rmSync(dir, { recursive: true, force: true });
  }, 180_000);

  it('has commands to run, some of them in a terminal of their own', () => {
    expect(steps.length).toBeGreaterThan(3);
    expect(steps.some((s) => s.staysRunning)).toBe(true);
  });

  // Named at collection from the page as it is; run with its addresses moved to this run's ports.
  stepsOf(readFileSync(DOC, 'utf8')).forEach((written, i, all) => {
    it(`block ${i + 1} of ${all.length}: ${written.script.split('\n')[0]}`, async (ctx) => {
      if (broken) ctx.skip(`an earlier block failed: ${broken}`);
      const step = steps[i]!;
      broken = step.script.split('\n')[0];
      if (step.staysRunning) {
        const b = new Background(step.script, shell);
        background.push(b);
        await b.ready(step.expect);
      } else {
        const { code, output } = await runScript(step.script, shell);
        expect(code, output).toBe(0);
        expect(missingLines(output, step.expect), output).toEqual([]);
      }
      broken = undefined;
    }, 900_000);
  });

  it("stops on Ctrl-C in each terminal, as the page's last step says", async (ctx) => {
    if (broken) ctx.skip(`an earlier block failed: ${broken}`);
    const ended = await Promise.all(background.map((b) => b.interrupt()));
    const outputs = background.map((b) => b.output.slice(-2000)).join('\n---\n');
    // Each ends by its own exit code 0 or by the SIGINT itself (npm passes it on to its script, then
    // ends by it), and what it started has stopped: Switchyard, PostgreSQL, Temporal, both Supersets.
    expect(
      ended.every((e) => e.code === 0 || e.signal === 'SIGINT'),
      `${JSON.stringify(ended)}\n${outputs}`,
    ).toBe(true);
    expect(await Promise.all(ports.map(listening)), outputs).toEqual(ports.map(() => false));
  }, 120_000);
});
