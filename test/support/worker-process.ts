import { spawn, type ChildProcess } from 'node:child_process';
import { inject } from 'vitest';
import type { Harness } from './harness.ts';

/** The harness's Temporal TLS / API key settings, so a worker process connects the way its API does. */
function temporalSecurityEnv(h: Harness): Record<string, string> {
  const keys = [
    'TEMPORAL_TLS',
    'TEMPORAL_TLS_CERT',
    'TEMPORAL_TLS_KEY',
    'TEMPORAL_TLS_CA',
    'TEMPORAL_TLS_SERVER_NAME',
    'TEMPORAL_API_KEY',
  ] as const;
  return Object.fromEntries(keys.flatMap((k) => (h.config[k] === undefined ? [] : [[k, String(h.config[k])]])));
}

/** A worker as its own OS process (`npm run worker`'s entry), so a test can really kill it. */
export function spawnWorker(h: Harness, env: Record<string, string> = {}): ChildProcess {
  return spawn(process.execPath, ['worker/main.ts'], {
    env: {
      ...process.env,
      DATABASE_URL: h.databaseUrl,
      TEMPORAL_ADDRESS: h.config.TEMPORAL_ADDRESS,
      TEMPORAL_TASK_QUEUE: h.config.TEMPORAL_TASK_QUEUE,
      ...temporalSecurityEnv(h),
      SWITCHYARD_SECRET_KEY: h.config.SWITCHYARD_SECRET_KEY,
      SWITCHYARD_DATA_DIR: h.config.SWITCHYARD_DATA_DIR,
      SWITCHYARD_WORKFLOW_BUNDLE: inject('workflowBundlePath'),
      LOG_LEVEL: 'warn',
      ...env,
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
