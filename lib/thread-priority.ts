import fs from 'node:fs';
import os from 'node:os';

/**
 * Lowers the CPU priority of this process's threads except the main one (Linux: each thread has
 * its own nice value). In the all-in-one process the main thread answers HTTP requests while
 * Temporal's core runtime and the workflow thread do the worker's work: those yield to it, so a
 * saturated worker cannot starve the API. Returns how many threads were lowered (0 elsewhere).
 */
export function lowerBackgroundThreads(niceness: number): number {
  let tids: string[];
  try {
    tids = fs.readdirSync('/proc/self/task');
  } catch {
    return 0; // not Linux
  }
  let lowered = 0;
  for (const tid of tids) {
    if (Number(tid) === process.pid) continue; // the main thread's id is the process id
    try {
      if (os.getPriority(Number(tid)) < niceness) {
        os.setPriority(Number(tid), niceness);
        lowered++;
      }
    } catch {
      // the thread ended meanwhile, or lowering is not permitted
    }
  }
  return lowered;
}
