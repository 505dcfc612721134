import { createRequire } from 'node:module';
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';
import { isSecretKey, redactText } from './redact.ts';
import { currentScope } from './telemetry/scope.ts';

export type { Logger };

/** `json`: one JSON object a line; `pretty`: readable lines for a person at a terminal; `auto`: pretty on a terminal, else JSON. */
export type LogFormat = 'auto' | 'json' | 'pretty';

const require = createRequire(import.meta.url);

/** The one decision of how logs are written: `auto` is pretty only when stdout is a terminal. */
export function resolveLogFormat(format: LogFormat, stdoutIsTty = process.stdout.isTTY === true): 'json' | 'pretty' {
  return format === 'auto' ? (stdoutIsTty ? 'pretty' : 'json') : format;
}

/**
 * Structured logs on stdout (or `destination`); secret-named fields never leave the process.
 * Every line says which request and task it belongs to (`requestId`, `taskId`, from
 * lib/telemetry/scope.ts) and, with tracing on, its `traceId`/`spanId`.
 */
export function createLogger(level: string, name = 'switchyard', destination?: DestinationStream, format: LogFormat = 'auto'): Logger {
  const chosen = destination && format === 'auto' ? 'json' : resolveLogFormat(format);
  return pino(
    {
      name,
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      mixin: correlation,
      formatters: {
        level: (label) => ({ level: label }),
        log: (obj) => scrub(obj) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((a) => (typeof a === 'string' ? redactText(a) : a)) as Parameters<typeof method>);
        },
      },
    },
    chosen === 'pretty' ? prettyStream(destination) : destination,
  );
}

/** The ids a line is correlated by: its request, its task, its trace (only those known here). */
function correlation(): Record<string, unknown> {
  const scope = currentScope();
  const span = trace.getActiveSpan();
  const ctx = span?.isRecording() ? span.spanContext() : undefined;
  return {
    ...(scope?.requestId ? { requestId: scope.requestId } : {}),
    ...(scope?.taskId ? { taskId: scope.taskId } : {}),
    ...(ctx && isSpanContextValid(ctx) ? { traceId: ctx.traceId, spanId: ctx.spanId } : {}),
  };
}

/**
 * pino-pretty, in this thread (a terminal is slow to fill anyway): time, level, the task id in
 * brackets, the message, then the line's other fields on the same line. Loaded only when used.
 */
function prettyStream(destination?: DestinationStream): DestinationStream {
  const pretty = require('pino-pretty') as typeof import('pino-pretty');
  return pretty({
    colorize: destination === undefined && process.stdout.isTTY === true,
    translateTime: 'SYS:HH:MM:ss.l',
    ignore: 'pid,hostname,taskId',
    messageFormat: '{if taskId}[{taskId}] {end}{msg}',
    singleLine: true,
    sync: true,
    ...(destination ? { destination: destination as NodeJS.WritableStream } : {}),
  });
}

function scrub(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') {
    return typeof value === 'string' ? redactText(value) : value;
  }
  if (value instanceof Error) return { type: value.name, message: redactText(value.message), stack: value.stack };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = isSecretKey(k) ? '[REDACTED]' : scrub(v, depth + 1);
  return out;
}
