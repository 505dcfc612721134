import fs from 'node:fs';
import os from 'node:os';
import { lowerThreadsOf } from './thread-priority.ts';

/**
 * Node flags for the two long-running processes, sized for a small machine: a smaller young
 * generation and a capped old space keep resident memory flat under load (measured in
 * bench/tasks.bench.ts). package.json's `api` and `worker` scripts carry the same flags; a test
 * keeps them in step.
 */
export const NODE_FLAGS = {
  api: ['--max-semi-space-size=8', '--max-old-space-size=192'],
  worker: ['--max-semi-space-size=2', '--max-old-space-size=160'],
  // The all-in-one's main thread runs the worker; its API thread's heap is capped by API_THREAD_HEAP.
  allInOne: ['--max-semi-space-size=2', '--max-old-space-size=160', `--v8-pool-size=${gcHelperThreads()}`],
} as const;

/**
 * V8's helper threads (garbage collection, compilation) serve every isolate of a process and run
 * at normal priority: lowered, they would hold the API's own collections up. Node starts four;
 * during a collection of the worker's heaps they could take every core of a small machine from
 * the API thread and its database sessions. One core is left to the API: on 2 cores, one helper
 * (bench:tasks, eight short runs each: open-loop p99 26-46 ms in seven of eight against 25-71 ms with four).
 */
function gcHelperThreads(): number {
  return Math.min(4, Math.max(1, os.availableParallelism() - 1));
}

/** The heap of the API's thread in the all-in-one process (the API process's flags, as resource limits). */
export const API_THREAD_HEAP = { maxOldGenerationSizeMb: 128, maxYoungGenerationSizeMb: 16 } as const;

/**
 * On a shared machine the worker yields the CPU to the API: task throughput barely changes, while
 * request latency stays low under a burst of work (measured in bench/tasks.bench.ts).
 */
export const WORKER_NICENESS = 19;

const RELOWER_MS = 5_000;

/**
 * Runs a background process (the Temporal dev server, a split worker) at the lowest CPU priority.
 * Linux gives each thread its own nice value and `setpriority(pid)` reaches only the thread whose
 * id is the pid: a Go server or a Node runtime that already started its threads would keep them at
 * full priority (measured: the dev server took a whole core at nice 0 under bench:tasks). So every
 * thread is lowered, and again every few seconds for threads started meanwhile; the timer ends
 * with the process.
 */
export function lowerPriority(pid: number): void {
  const started = startTimeOf(pid);
  const lower = () => {
    lowerAutogroupOf(pid, WORKER_NICENESS);
    if (lowerThreadsOf(pid, WORKER_NICENESS) === 0) {
      try {
        os.setPriority(pid, WORKER_NICENESS); // no /proc (not Linux): the process as a whole
      } catch {
        // expected: ended, or not permitted here: it runs at normal priority.
        // ended, or not permitted here: it runs at normal priority
      }
    }
  };
  lower();
  const timer = setInterval(() => {
    // Ended, or its pid now names another process: nothing more to lower.
    if (startTimeOf(pid) !== started || started === null) {
      clearInterval(timer);
      return;
    }
    lower();
  }, RELOWER_MS);
  timer.unref();
}

/**
 * With autogroup scheduling (Linux's default on desktops and many servers,
 * /proc/sys/kernel/sched_autogroup_enabled) the CPU is first shared fairly between sessions and
 * only then by nice value within one: a detached process (its own session, as the Temporal dev
 * server) would get a whole session's share whatever its threads' nice values. Lowering its
 * autogroup's nice makes the session yield too. Only a session other than ours is lowered: the
 * value belongs to the whole group. Without CAP_SYS_ADMIN the kernel takes one such write per
 * 100 ms machine-wide (EAGAIN otherwise): lowerPriority's timer tries again.
 */
export function lowerAutogroupOf(pid: number, niceness: number): boolean {
  // "/autogroup-<id> nice <n>"; undefined without autogroups (kernel without them, not Linux) or once ended.
  const read = (p: number | 'self') => {
    try {
      const m = /^(\/autogroup-\d+) nice (-?\d+)/.exec(fs.readFileSync(`/proc/${p}/autogroup`, 'utf8'));
      return m ? { group: m[1], nice: Number(m[2]) } : undefined;
    } catch {
      // expected: no autogroup here (not Linux, or not enabled).
      return undefined;
    }
  };
  const theirs = read(pid);
  if (!theirs || theirs.group === read('self')?.group) return false;
  if (theirs.nice >= niceness) return true;
  try {
    fs.writeFileSync(`/proc/${pid}/autogroup`, String(niceness));
    return true;
  } catch {
    // expected: not permitted here, or EAGAIN: threads' nice values still apply within its group.
    return false; // not permitted here, or EAGAIN: threads' nice values still apply within its group
  }
}

/** When a process started (Linux: field 22 of /proc/<pid>/stat), to tell it from a later one with its pid; null elsewhere or once ended. */
function startTimeOf(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    // expected: the process ended, or no /proc: no state to tell.
    return null;
  }
}
