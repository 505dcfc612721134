// What keeps the embedded platform small and its API quick under a busy worker (bench:tasks):
// the workflow bundle's module graph, evaluated again for every workflow the worker creates, and
// which threads of the all-in-one process give way to the API's.
import { readFileSync } from 'node:fs';
import { describe, expect, inject, it } from 'vitest';
import { WORKER_THREAD_NAMES } from '../../lib/thread-priority.ts';

describe('lean runtime', () => {
  it('bundles workflows without zod or any library only activities and the API need', () => {
    const bundle = readFileSync(inject('workflowBundlePath'), 'utf8');
    const modules = [...bundle.matchAll(/^\/\*\*\*\/ "([^"]+)"/gm)].map((m) => m[1]);
    expect(modules.length).toBeGreaterThan(20); // the pattern still finds webpack's module ids
    const packages = new Set(modules.flatMap((m) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(m)?.[1] ?? []));
    expect([...packages].sort()).toEqual(expect.not.arrayContaining(['zod', 'knex', 'pg', 'undici', 'yaml', 'exceljs', 'openai']));
    expect(bundle.length).toBeLessThan(2.5 * 1024 * 1024);
  });

  it('lowers only the Temporal worker threads, never V8 platform threads or the libuv pool', () => {
    for (const name of ['tokio-runtime-w', 'temporal-real-s', 'workflow-proces', 'WorkerThread']) expect(name).toMatch(WORKER_THREAD_NAMES);
    for (const name of ['MainThread', 'V8Worker', 'libuv-worker', 'DelayedTaskSche', 'SignalInspector']) expect(name).not.toMatch(WORKER_THREAD_NAMES);
  });
});
