// A Markdown page's shell commands, run as a person following it would: each `sh` block in order,
// the `text` block right after it being the output the page says to expect. Read with marked's
// lexer (a Markdown parser, so fences, lists and info strings are read as Markdown reads them).
import { spawn, type ChildProcess } from 'node:child_process';
import { stripVTControlCharacters } from 'node:util';
import { marked, type Token } from 'marked';

/** One `sh` block: its script, whether it keeps running (`sh stays-running`), the lines it must print. */
export interface DocStep {
  script: string;
  staysRunning: boolean;
  expect: string[];
}

/** Runs of blanks as one space, trimmed: table padding and indentation are not what a page promises. */
export const normalize = (line: string): string => line.replace(/\s+/g, ' ').trim();

/**
 * The page's `sh` blocks in document order (nested ones included), each with the lines of a
 * `text` block that directly follows it as its expected output. Other blocks are prose.
 */
export function stepsOf(markdown: string): DocStep[] {
  const steps: DocStep[] = [];
  let previous: DocStep | undefined;
  // eslint-disable-next-line @typescript-eslint/no-floating-promises -- walkTokens returns its callback's results, and this callback is synchronous
  marked.walkTokens(marked.lexer(markdown), (token: Token) => {
    if (token.type !== 'code') return;
    const [lang = '', ...meta] = String(token.lang ?? '')
      .trim()
      .split(/\s+/);
    const text = String(token.text);
    if (lang === 'sh') {
      previous = { script: text, staysRunning: meta.includes('stays-running'), expect: [] };
      steps.push(previous);
      return;
    }
    if (lang === 'text' && previous) previous.expect = text.split('\n').map(normalize).filter(Boolean);
    previous = undefined;
  });
  return steps;
}

/** An expected line against an output line: its parts between `…` found in order. */
function lineMatches(actual: string, expected: string): boolean {
  let at = 0;
  for (const part of expected.split('…').map((p) => p.trim())) {
    if (!part) continue;
    const i = actual.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return true;
}

/** The expected lines not found in the output in their order (from the first one missing); [] when all are. */
export function missingLines(output: string, expected: readonly string[]): string[] {
  const lines = stripVTControlCharacters(output).split('\n').map(normalize);
  let at = 0;
  for (let k = 0; k < expected.length; k++) {
    const i = lines.findIndex((line, j) => j >= at && lineMatches(line, expected[k]!));
    if (i < 0) return expected.slice(k);
    at = i + 1;
  }
  return [];
}

export interface Shell {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

/** A block run to its end by bash, stopping at its first failing command (pipelines included). */
export function runScript(script: string, shell: Shell): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-e', '-o', 'pipefail', '-c', script], {
      cwd: shell.cwd,
      env: shell.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output }));
  });
}

/**
 * A block that keeps running, in a process group of its own as in a terminal of its own: `ready`
 * resolves once its expected lines were printed, or rejects when it exits first; `interrupt` is
 * the terminal's Ctrl-C (SIGINT to the whole group) and answers its exit code.
 */
export class Background {
  readonly child: ChildProcess;
  output = '';
  private readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly listeners = new Set<() => void>();

  constructor(script: string, shell: Shell) {
    this.child = spawn('bash', ['-c', script], { cwd: shell.cwd, env: shell.env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const take = (d: Buffer) => {
      this.output += String(d);
      for (const l of this.listeners) l();
    };
    this.child.stdout!.on('data', take);
    this.child.stderr!.on('data', take);
    this.exited = new Promise((resolve) => this.child.once('exit', (code, signal) => resolve({ code, signal })));
  }

  ready(expected: readonly string[]): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (missingLines(this.output, expected).length) return;
        this.listeners.delete(check);
        resolve();
      };
      this.listeners.add(check);
      check();
      this.exited.then((code) => {
        this.listeners.delete(check);
        reject(
          new Error(
            `exited with ${code} before printing ${JSON.stringify(missingLines(this.output, expected))}:\n${this.output.slice(-4000)}`,
          ),
        );
      }, reject);
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Ctrl-C: SIGINT to the group; how the block's process ended (npm may end by the signal itself, as in a terminal). */
  interrupt(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.running) process.kill(-this.child.pid!, 'SIGINT');
    return this.exited;
  }

  /**
   * Cleanup after a test, passed or not: Ctrl-C first, so the block stops what it started in
   * process groups of their own (Superset's servers, Temporal's dev server), then the group killed
   * if it has not ended within `graceMs`.
   */
  async stop(graceMs = 60_000): Promise<void> {
    if (!this.running) return;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const ended = await Promise.race([this.interrupt(), late]);
    clearTimeout(timer);
    if (ended !== 'late') return;
    try {
      process.kill(-this.child.pid!, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
}
