/**
 * CPU time spent by process trees, from Linux's /proc: what a contender made each part of the
 * stack burn. On the 2-core development machine a run that keeps both cores busy is bound by the
 * sum of its parts' CPU time rather than by its longest chain of calls, so a wall-time ratio reads
 * right only beside these figures. Elsewhere (no /proc) every figure is 0.
 */
import fs from 'node:fs';

/** Linux's clock ticks per second for /proc's utime and stime (`getconf CLK_TCK`, 100 on every Linux this runs on). */
const TICKS_PER_SECOND = 100;

interface Proc {
  ppid: number;
  ticks: number;
}

function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((d) => /^\d+$/.test(d));
  } catch {
    return out;
  }
  for (const pid of entries) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      // The command name may hold spaces and parentheses: the fields start after its last ')'.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(pid), { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Named groups of root pids; each root counts with all its descendants, and `rest` with every other descendant of `rest`. */
export interface CpuGroups {
  groups: Record<string, number[]>;
  /** A process whose other descendants (not in a group) are counted as `rest`: the bench itself, for the platform it started. */
  rest?: { name: string; root: number };
}

/** CPU seconds so far of each group's process trees (a process that ended is no longer counted: take both snapshots while the trees live). */
export function cpuSnapshot(spec: CpuGroups): Record<string, number> {
  const procs = processes();
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const tree = (root: number): number[] => [root, ...(children.get(root) ?? []).flatMap(tree)];
  const out: Record<string, number> = {};
  const counted = new Set<number>();
  for (const [name, roots] of Object.entries(spec.groups)) {
    const pids = roots.flatMap(tree);
    for (const pid of pids) counted.add(pid);
    out[name] = pids.reduce((sum, pid) => sum + (procs.get(pid)?.ticks ?? 0), 0) / TICKS_PER_SECOND;
  }
  if (spec.rest) {
    const others = tree(spec.rest.root).filter((pid) => pid !== spec.rest!.root && !counted.has(pid));
    out[spec.rest.name] = others.reduce((sum, pid) => sum + (procs.get(pid)?.ticks ?? 0), 0) / TICKS_PER_SECOND;
  }
  return out;
}

/** Each group's CPU seconds between two snapshots, rounded to 10 ms (the ticks' resolution). */
export function cpuSpent(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.keys(after).map((k) => [k, Math.round(Math.max(0, after[k]! - (before[k] ?? 0)) * 100) / 100]));
}
