import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, resolveLogFormat } from '../../lib/logger.ts';
import { runInScope } from '../../lib/telemetry/scope.ts';
import { realPairAvailable, seedForMigration, startRealPair, type RealPair } from '../dashboard-migration/real-pair.ts';
import { capturedLogs } from '../support/harness.ts';
import { available } from '../support/ci.ts';

/**
 * Logs people read: readable lines on a terminal, JSON otherwise or when asked, and every line of
 * a task (the API's own included) carrying the task's id.
 */
const PROBE =
  "import { createLogger } from './lib/logger.ts'; createLogger('info', 'probe', undefined, process.env.FORMAT).info({ n: 1 }, 'hello');";

/** The probe's stdout, run with stdout a pipe or (through util-linux `script`) a terminal. */
function probe(format: string, tty: boolean): string {
  const node = [process.execPath, '--input-type=module', '-e', PROBE];
  const quoted = node.map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const r = tty
    ? spawnSync('script', ['-qec', quoted, '/dev/null'], { env: { ...process.env, FORMAT: format }, encoding: 'utf8' })
    : spawnSync(node[0]!, node.slice(1), { env: { ...process.env, FORMAT: format }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe('log format', () => {
  it('is pretty only on a terminal unless chosen', () => {
    expect(resolveLogFormat('auto', true)).toBe('pretty');
    expect(resolveLogFormat('auto', false)).toBe('json');
    expect(resolveLogFormat('json', true)).toBe('json');
    expect(resolveLogFormat('pretty', false)).toBe('pretty');
  });

  it('prints JSON into a pipe', () => {
    const piped = JSON.parse(probe('auto', false).trim());
    expect(piped).toMatchObject({ level: 'info', name: 'probe', msg: 'hello', n: 1 });
  });

  // util-linux `script` gives the probe a terminal: locally its absence skips this case, under CI=true it fails.
  it.runIf(available('script (util-linux)', existsSync('/usr/bin/script'), "install Debian's bsdutils (.ci/run does)"))(
    'prints readable lines on a terminal',
    () => {
      const onTerminal = probe('auto', true);
      expect(onTerminal).toMatch(/INFO.*\(probe\).*hello/);
      expect(onTerminal).not.toContain('"level"');
      expect(() => JSON.parse(probe('json', true).trim())).not.toThrow();
    },
  );

  it("puts the task's id at the front of a readable line, and keeps secrets out of it", () => {
    const lines: string[] = [];
    const out = new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) });
    const logger = createLogger('info', 'api', out, 'pretty');
    runInScope({ requestId: 'req-1', taskId: 'migration-abc' }, () => logger.info({ password: 'hunter2' }, 'task created'));
    expect(lines.join('')).toMatch(/INFO \(api\): \[migration-abc\] task created .*"requestId":"req-1"/);
    expect(lines.join('')).not.toContain('hunter2');
  });
});

describe.runIf(realPairAvailable())('task ids in the logs of a migration a (6.1.0) → b (6.1.0)', () => {
  let pair: RealPair;
  let taskId: string;
  const mark = capturedLogs.length;
  const parsed = () => capturedLogs.slice(mark).map((l) => JSON.parse(l) as Record<string, any>);

  beforeAll(async () => {
    pair = await startRealPair();
    const { ids, mapping } = await seedForMigration(pair, 'Logged', 2);
    const r = await pair.admin('POST', '/api/dashboards/migrate', {
      json: { source_env_id: pair.sourceEnv, target_env_id: pair.targetEnv, dashboard_ids: ids, db_mappings: mapping },
    });
    expect(r.status, r.text).toBe(202);
    taskId = r.body.task_id;
    expect((await pair.h.waitForTask(taskId, undefined, 300_000)).status).toBe('SUCCEEDED');
  }, 420_000);
  afterAll(() => pair?.close());

  it("marks the API's lines of the request that started the task with its id", () => {
    const lines = parsed();
    const access = lines.find((l) => l.msg === 'request' && l.path === '/api/dashboards/migrate' && l.method === 'POST');
    expect(access).toMatchObject({ taskId, status: 202 });
    const created = lines.find((l) => l.msg === 'task created' && l.taskId === taskId);
    expect(created).toMatchObject({ kind: 'migration', requestId: access!.requestId });
    // Reading the task: the access line names it too.
    const read = lines.find((l) => l.msg === 'request' && l.path === `/api/tasks/${taskId}`);
    expect(read).toMatchObject({ taskId, status: 200 });
  });

  it("marks the worker's lines of the task with its id", () => {
    const ofTask = parsed().filter((l) => l.workflowId === taskId || l.taskId === taskId);
    expect(ofTask.filter((l) => l.name === 'test' && l.msg !== 'request').length).toBeGreaterThan(3);
    for (const l of ofTask) expect(l.taskId, l.msg).toBe(taskId);
  });
});
