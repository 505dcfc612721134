// What keeps the embedded platform small and its API quick under a busy worker (bench:tasks):
// the workflow bundle's module graph, evaluated again for every workflow the worker creates, and
// which threads of the all-in-one process give way to the API's.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { lowerAutogroupOf, lowerPriority, WORKER_NICENESS } from '../../lib/process-flags.ts';
import { WORKER_THREAD_NAMES } from '../../lib/thread-priority.ts';
import { API_THREAD_NAME } from '../../api/in-thread.ts';
import { waitFor } from '../support/harness.ts';

/** Nice value of every thread of a process (Linux: field 19 of /proc/<pid>/task/<tid>/stat). */
function threadNiceness(pid: number): number[] {
  return readdirSync(`/proc/${pid}/task`).map((tid) => {
    const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('lean runtime', () => {
  it('bundles workflows without zod or any library only activities and the API need', () => {
    const bundle = readFileSync(inject('workflowBundlePath'), 'utf8');
    const modules = [...bundle.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((m) => m[1]);
    expect(modules.length).toBeGreaterThan(20); // the pattern still finds webpack's module ids
    const packages = new Set(modules.flatMap((m) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m)?.[1] ?? []));
    expect([...packages].sort()).toEqual(expect.not.arrayContaining(['zod', 'knex', 'pg', 'undici', 'yaml', 'exceljs', 'openai']));
    expect(bundle.length).toBeLessThan(2.5 * 1024 * 1024);
  });

  it('lowers only the Temporal worker threads, never the API thread, V8 platform threads or the libuv pool', () => {
    for (const name of ['tokio-runtime-w', 'temporal-real-s', 'workflow-proces', 'WorkerThread']) expect(name).toMatch(WORKER_THREAD_NAMES);
    for (const name of [API_THREAD_NAME, 'MainThread', 'V8Worker', 'libuv-worker', 'DelayedTaskSche', 'SignalInspector']) {
      expect(name).not.toMatch(WORKER_THREAD_NAMES);
    }
  });

  it.skipIf(!existsSync('/proc/self/task'))(
    'lowers every thread of a background process that already runs several, not only its first',
    async () => {
      // A Node process starts its platform and libuv threads at once, as the Temporal dev server (Go) does.
      const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        // Waited for as an event (the bound is against a hang only, far above a loaded start).
        await waitFor(async () => readdirSync(`/proc/${child.pid}/task`).length > 3, 120_000, "the child's threads");
        expect(threadNiceness(child.pid!).some((n) => n < WORKER_NICENESS)).toBe(true);
        lowerPriority(child.pid!);
        const after = threadNiceness(child.pid!);
        expect(after.length).toBeGreaterThan(3);
        expect(after.every((n) => n === WORKER_NICENESS)).toBe(true);
      } finally {
        child.kill();
      }
    },
  );

  it.skipIf(!existsSync('/proc/self/autogroup'))(
    "lowers a detached background process's session too, since the kernel shares the CPU between sessions before nice values count, and never our own",
    async () => {
      const ours = readFileSync('/proc/self/autogroup', 'utf8');
      const detached = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore', detached: true });
      const attached = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      try {
        // The child has its own session (and autogroup) once its setsid ran: waited for, not a fixed pause.
        await expect.poll(() => readFileSync(`/proc/${detached.pid}/autogroup`, 'utf8'), { timeout: 60_000, interval: 50 }).not.toBe(ours);
        // A new session is a new autogroup at nice 0: its threads' own nice values would not make it yield to ours.
        expect(readFileSync(`/proc/${detached.pid}/autogroup`, 'utf8')).toMatch(/nice 0/);
        lowerPriority(detached.pid!);
        // At once, or on the timer's next try when another session's write came within the kernel's 100 ms.
        await expect
          .poll(() => readFileSync(`/proc/${detached.pid}/autogroup`, 'utf8'), { timeout: 60_000, interval: 100 })
          .toMatch(new RegExp(`nice ${WORKER_NICENESS}\\b`));
        // Same session as ours: its group is ours, and lowering it would lower the API with it.
        expect(lowerAutogroupOf(attached.pid!, WORKER_NICENESS)).toBe(false);
        expect(readFileSync('/proc/self/autogroup', 'utf8')).toBe(ours);
      } finally {
        detached.kill();
        attached.kill();
      }
    },
  );
});
