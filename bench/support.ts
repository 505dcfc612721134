import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/** Resident memory of a process in MB, from /proc (Linux). */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

export class RssSampler {
  peak = 0;
  private timer: NodeJS.Timeout;
  constructor(pid: number) {
    this.timer = setInterval(() => (this.peak = Math.max(this.peak, rssMb(pid))), 100);
  }
  stop(): number {
    clearInterval(this.timer);
    return this.peak;
  }
}

export function spawnEntry(entry: string, flags: readonly string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...flags, entry], { env, stdio: ['ignore', 'ignore', 'inherit'] });
}

export async function waitUntil(fn: () => Promise<boolean>, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await fn().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export async function stopChild(c: ChildProcess): Promise<void> {
  if (c.exitCode !== null) return;
  await new Promise<void>((resolve) => {
    c.once('exit', () => resolve());
    c.kill('SIGTERM');
    setTimeout(() => c.kill('SIGKILL'), 10_000).unref();
  });
}
