import { spawn, type ChildProcess } from 'node:child_process';
import type { SearchAttributeSpec } from '../temporal.ts';
import fs from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { freePort } from './free-port.ts';

export interface TemporalDevServer {
  address: string;
  uiUrl?: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * Starts `temporal server start-dev` with the project's search attributes. With `dbFile` the
 * state survives restarts (SQLite); without `uiPort` it runs headless (tests).
 */
export interface TemporalDevServerOptions {
  cli: string;
  /** Without one, a free port is chosen (and another one when something took it meanwhile). */
  port?: number;
  uiPort?: number;
  dbFile?: string;
  namespace?: string;
  logFile: string;
  /** Registered at start, so workflows can carry them from the first task on. */
  searchAttributes?: readonly SearchAttributeSpec[];
}

class PortTakenError extends Error {}

export async function startTemporalDevServer(opts: TemporalDevServerOptions): Promise<TemporalDevServer> {
  if (opts.port !== undefined) return startOn(opts, opts.port);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOn(opts, await freePort());
    } catch (err) {
      if (!(err instanceof PortTakenError) || attempt >= 4) throw err;
    }
  }
}

async function startOn(opts: TemporalDevServerOptions, port: number): Promise<TemporalDevServer> {
  const args = devServerArgs(opts, port);
  if (opts.dbFile) fs.mkdirSync(path.dirname(opts.dbFile), { recursive: true });
  fs.mkdirSync(path.dirname(opts.logFile), { recursive: true });
  const out = fs.openSync(opts.logFile, 'a');
  const logStart = fs.fstatSync(out).size;
  const child: ChildProcess = spawn(opts.cli, args, { stdio: ['ignore', out, out], detached: true });
  fs.closeSync(out);
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });

  const address = `127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) {
      const message = `temporal dev server exited with code ${exited} before it was ready; see ${opts.logFile}`;
      throw /address already in use/i.test(logSince(opts.logFile, logStart)) ? new PortTakenError(message) : new Error(message);
    }
    try {
      const conn = await Connection.connect({ address, connectTimeout: '1 second' });
      await conn.workflowService.getSystemInfo({});
      await conn.close();
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`temporal dev server did not answer on ${address} within 60 s; see ${opts.logFile}`);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  return {
    address,
    uiUrl: opts.uiPort ? `http://127.0.0.1:${opts.uiPort}` : undefined,
    pid: child.pid!,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited !== null) return resolve();
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
        child.once('exit', () => {
          clearTimeout(timer);
          resolve();
        });
        child.kill('SIGTERM');
      }),
  };
}

/** The `temporal server start-dev` command line: loopback only, the project's dynamic config, a SQLite file or in memory, a UI or headless. */
export function devServerArgs(opts: TemporalDevServerOptions, port: number): string[] {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(port),
    '--namespace',
    opts.namespace ?? 'default',
    '--log-format',
    'json',
    '--log-level',
    'warn',
    // No phone-home offline; updates are used by approval gates.
    '--dynamic-config-value',
    'frontend.enableServerVersionCheck=false',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecution=true',
    '--dynamic-config-value',
    'frontend.enableUpdateWorkflowExecutionAsyncAccepted=true',
    // One partition per task queue (the server's default is four, for a cluster's many pollers):
    // with one worker, a task on a partition no poll waits on is forwarded to another first,
    // tens of milliseconds before each workflow and activity task starts (measured: 47 → 8 ms).
    '--dynamic-config-value',
    'matching.numTaskqueueReadPartitions=1',
    '--dynamic-config-value',
    'matching.numTaskqueueWritePartitions=1',
    // The history's transfer queue read up to 100 times a second instead of 20:
    // deploy/temporal/dynamicconfig.yaml says why (once a workflow spent its burst, each hop waited 40-50 ms).
    '--dynamic-config-value',
    'history.transferProcessorMaxPollRPS=100',
    ...cliSearchAttributeFlags(opts.searchAttributes ?? []),
  ];
  if (opts.dbFile) {
    // WAL with normal sync: several times the write throughput of the default rollback journal.
    args.push('--db-filename', opts.dbFile, '--sqlite-pragma', 'journal_mode=wal', '--sqlite-pragma', 'synchronous=normal');
  }
  if (opts.uiPort) args.push('--ui-port', String(opts.uiPort), '--ui-ip', '127.0.0.1');
  else args.push('--headless');
  return args;
}

function logSince(file: string, offset: number): string {
  try {
    return fs.readFileSync(file).subarray(offset).toString('utf8');
  } catch {
    // expected: no log written yet: nothing to show.
    return '';
  }
}

/** Temporal's CLI spells the types in PascalCase. */
function cliSearchAttributeFlags(keys: readonly SearchAttributeSpec[]): string[] {
  const names: Record<string, string> = {
    KEYWORD: 'Keyword',
    KEYWORD_LIST: 'KeywordList',
    TEXT: 'Text',
    INT: 'Int',
    BOOL: 'Bool',
    DATETIME: 'Datetime',
    DOUBLE: 'Double',
  };
  return keys.flatMap((k) => ['--search-attribute', `${k.name}=${names[k.type]}`]);
}
