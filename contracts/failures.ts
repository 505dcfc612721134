/**
 * How an item's failure travels from an activity to its outcome. An activity records what it can
 * report (a refusal, a missing dashboard, a bundle it cannot read) in the item's outcome; what
 * Temporal should retry it throws as an ApplicationFailure of type `UpstreamUnavailable` carrying
 * the same fields, so that once the retries run out the workflow still reports the item with its
 * step, Superset's own answer and next actions.
 */
import type { ItemOutcome } from './outcomes.ts';

/** The failure fields of an item outcome. */
export type ItemFailure = Required<Pick<ItemOutcome, 'error' | 'step' | 'next_actions'>> & Pick<ItemOutcome, 'upstream_error'>;

/** ApplicationFailure types thrown by item activities; the workflows' retry policies follow them. */
export const FAILURE_TYPES = {
  /** Superset, or the network to it, failed in a way that passes (network, timeout, 502/503/504): retry. */
  unavailable: 'UpstreamUnavailable',
  /** The item cannot succeed as asked; asking again changes nothing. */
  itemFailed: 'ItemFailed',
} as const;

/**
 * For `retry.nonRetryableErrorTypes`: failures whose retry would only repeat them, an egress
 * policy's refusal among them (HostNotAllowedError of lib/errors.ts: ALLOWED_UPSTREAM_HOSTS does
 * not allow the host, and asking again changes nothing).
 */
export const NON_RETRYABLE_FAILURE_TYPES: string[] = [FAILURE_TYPES.itemFailed, 'HostNotAllowedError'];

export function isItemFailure(value: unknown): value is ItemFailure {
  const v = value as Partial<ItemFailure> | null;
  return typeof v === 'object' && v !== null && typeof v.error === 'string' && typeof v.step === 'string' && Array.isArray(v.next_actions);
}
