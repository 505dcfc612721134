import os from 'node:os';

/**
 * Node flags for the two long-running processes, sized for a small machine: a smaller young
 * generation and a capped old space keep resident memory flat under load (measured in
 * bench/tasks.bench.ts). package.json's `api` and `worker` scripts carry the same flags; a test
 * keeps them in step.
 */
export const NODE_FLAGS = {
  api: ['--max-semi-space-size=8', '--max-old-space-size=192'],
  worker: ['--max-semi-space-size=2', '--max-old-space-size=160'],
  allInOne: ['--max-semi-space-size=8', '--max-old-space-size=256'],
} as const;

/**
 * On a shared machine the worker yields the CPU to the API: task throughput barely changes, while
 * request latency stays low under a burst of work (measured in bench/tasks.bench.ts).
 */
export const WORKER_NICENESS = 19;

export function lowerPriority(pid: number): void {
  try {
    os.setPriority(pid, WORKER_NICENESS);
  } catch {
    // not permitted here: run at normal priority
  }
}
