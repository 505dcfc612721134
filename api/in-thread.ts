import { Worker } from 'node:worker_threads';

/** The OS-visible name of the API's thread (Linux shows it in /proc/<pid>/task/<tid>/comm). */
export const API_THREAD_NAME = 'switchyard-api';

export interface ApiThread {
  /** Closes the API (connections, pools, Temporal client) and ends the thread. */
  stop(): Promise<void>;
  /** Settles when the thread ends, whether asked to or not (with the reason when it failed). */
  ended: Promise<void>;
}

/**
 * Runs the API (api/thread.ts) in a worker thread of this process and waits until it listens.
 * Configuration comes from the environment, as for `npm run api`; the thread's heap gets its own cap.
 */
export async function startApiThread(opts: { maxOldGenerationSizeMb: number; maxYoungGenerationSizeMb: number }): Promise<ApiThread> {
  const worker = new Worker(new URL('./thread.ts', import.meta.url), {
    name: API_THREAD_NAME,
    resourceLimits: { maxOldGenerationSizeMb: opts.maxOldGenerationSizeMb, maxYoungGenerationSizeMb: opts.maxYoungGenerationSizeMb },
  });
  let stopped: (() => void) | undefined;
  const ended = new Promise<void>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', (code) => (code === 0 || stopped ? resolve() : reject(new Error(`the API thread exited with code ${code}`))));
  });
  await new Promise<void>((resolve, reject) => {
    worker.on('message', (m: unknown) => {
      if (m === 'listening') resolve();
      if (m === 'stopped') stopped?.();
    });
    ended.then(() => reject(new Error('the API thread ended before it listened')), reject);
  });
  return {
    ended,
    stop: async () => {
      const done = new Promise<void>((resolve) => (stopped = resolve));
      worker.postMessage('stop');
      // A thread that has not stopped within 15 s is terminated below all the same.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, 15_000)));
      // expected: a thread that ended with an error is terminated below all the same (its error is `ended`'s, which the caller awaits).
      await Promise.race([done, ended.catch(() => undefined), late]);
      clearTimeout(timer);
      await worker.terminate();
    },
  };
}
