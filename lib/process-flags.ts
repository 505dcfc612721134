/**
 * Node flags for the two long-running processes, sized for a small machine: a smaller young
 * generation and a capped old space keep resident memory flat under load (measured in
 * bench/tasks.bench.ts). package.json's `api` and `worker` scripts carry the same flags; a test
 * keeps them in step.
 */
export const NODE_FLAGS = {
  api: ['--max-semi-space-size=8', '--max-old-space-size=192'],
  worker: ['--max-semi-space-size=2', '--max-old-space-size=160'],
} as const;
