import { pino, type DestinationStream, type Logger } from 'pino';
import { isSecretKey, redactText } from './redact.ts';

export type { Logger };

/** Structured JSON logs on stdout; secret-named fields never leave the process. */
export function createLogger(level: string, name = 'switchyard', destination?: DestinationStream): Logger {
  return pino(
    {
      name,
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
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
    destination,
  );
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
