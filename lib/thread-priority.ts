import fs from 'node:fs';
import os from 'node:os';

/**
 * The threads of the Temporal worker in this process, by the names Linux shows for them: the core
 * runtime (`tokio-runtime-w`, `temporal-*`, `workflow-proces…`) and the Node worker threads that run
 * the workflow sandbox (`WorkerThread`; the API's own thread is named `switchyard-api`). Left out
 * on purpose: V8's platform threads (`V8Worker`: garbage collection of the API's heap, whose pauses
 * wait for them) and libuv's pool (`libuv-worker`: the API's crypto and file reads). Lowered, those
 * would make requests wait for the lowest priority on a busy machine.
 */
export const WORKER_THREAD_NAMES = /^(tokio-runtime|temporal|workflow|WorkerThread)/;

/**
 * Lowers the CPU priority of this process's worker threads (Linux: each thread has its own nice
 * value), and with `mainThread` the main thread too: in the all-in-one process that one runs the
 * activities while the API answers on its own thread, so a saturated worker cannot starve it.
 * A thread starts with its creator's nice value, so libuv's pool must exist before the main
 * thread is lowered (scripts/all-in-one.ts starts it first). Returns how many threads were lowered
 * (0 elsewhere).
 */
export function lowerBackgroundThreads(niceness: number, opts: { mainThread?: boolean } = {}): number {
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    // expected: not Linux: no threads to lower.
    return 0; // not Linux
  }
  let lowered = 0;
  for (const tid of tids) {
    const main = Number(tid) === process.pid; // the main thread's id is the process id
    try {
      if (main ? !opts.mainThread : !WORKER_THREAD_NAMES.test(fs.readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim())) continue;
      if (os.getPriority(Number(tid)) < niceness) {
        os.setPriority(Number(tid), niceness);
        lowered++;
      }
    } catch {
      // expected: the thread ended meanwhile, or lowering is not permitted.
      // the thread ended meanwhile, or lowering is not permitted
    }
  }
  return lowered;
}

/**
 * Lowers every thread of another process (Linux: /proc/<pid>/task) to `niceness`. Returns how many
 * threads run at that priority now (0 where there is no /proc, or the process has ended).
 */
export function lowerThreadsOf(pid: number, niceness: number): number {
  let tids: string[];
  try {
    tids = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    // expected: the process ended, or no /proc: no threads to lower.
    return 0;
  }
  let low = 0;
  for (const tid of tids) {
    try {
      if (os.getPriority(Number(tid)) < niceness) os.setPriority(Number(tid), niceness);
      low++;
    } catch {
      // expected: the thread ended meanwhile, or lowering is not permitted.
      // the thread ended meanwhile, or lowering is not permitted
    }
  }
  return low;
}
