import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import type { Harness } from './harness.ts';

/** A worker as its own OS process (`npm run worker`'s entry), so a test can really kill it. */
export function spawnWorker(h: Harness): ChildProcess {
  return spawn(process.execPath, ['worker/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: h.config.TEMPORAL_TASK_QUEUE,
      SWITCHYARD_SECRET_KEY: h.config.SWITCHYARD_SECRET_KEY,
      SWITCHYARD_DATA_DIR: h.config.SWITCHYARD_DATA_DIR,
      SWITCHYARD_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

export async function stopProcess(p: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return;
  const exited = new Promise((res) => p.once('exit', res));
  p.kill(signal);
  await exited;
}
