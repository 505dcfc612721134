/**
 * Which exchanges say that an instance is down (its circuit's faults, ./circuit.ts), and which
 * say nothing about it. Only the connection does: refused, reset, unresolvable or unreachable,
 * no answer within the deadline, or a gateway's 502/503/504 standing in for Superset. Any answer
 * of Superset's own, a 4xx or a 500 included, proves it is up. Nothing sent (an egress refusal,
 * a closed client) and an answer over the size cap are neither.
 */
import { SupersetUnavailableError } from '../errors.ts';
import { unavailableFromStatus } from './answers.ts';
import type { ExchangeVerdict } from './circuit.ts';
import { isGatewayAnswer } from './gateway.ts';
import { isConnectTimeout, type CallSpec, type WireResponse } from './wire.ts';

const GATEWAY_STATUSES = new Set([502, 503, 504]);

/** The verdict on an exchange that came back with an answer. */
export function answerVerdict(host: string, res: WireResponse, spec: CallSpec): ExchangeVerdict {
  if (GATEWAY_STATUSES.has(res.status) && isGatewayAnswer(res)) {
    return { kind: 'fault', decisive: false, error: unavailableFromStatus(host, res, spec) };
  }
  return { kind: 'answered' };
}

/**
 * The verdict on an exchange that failed with `err` (the transport's wire error). A timeout is
 * decisive when what timed out is small by nature: the connection itself, or one of the
 * session's own exchanges (login, token refresh, CSRF token, under their short deadline). A
 * large call (an export, a chart-data query) that times out may only be large, so it counts
 * as one fault among others.
 */
export function failureVerdict(err: unknown, spec: CallSpec): ExchangeVerdict {
  if (!(err instanceof SupersetUnavailableError)) return { kind: 'neutral' };
  if (err.reason === 'network') return { kind: 'fault', decisive: false, error: err };
  if (err.reason === 'timeout') return { kind: 'fault', decisive: isConnectTimeout(err.cause) || spec.session === true, error: err };
  return { kind: 'neutral' };
}
