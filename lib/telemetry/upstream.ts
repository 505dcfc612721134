/**
 * Observers of the calls Switchyard makes to other hosts (Superset, git remotes, LLM providers):
 * each exchange counted and timed (./metrics.ts) under a bounded label set.
 */
import type { ExchangeObserver } from '../superset/transport/options.ts';
import { metrics, timedCall } from './metrics.ts';
import { supersetEndpointClass } from './superset-endpoint.ts';

/** The observer of one environment's Superset exchanges (SupersetClientPool's observerFor). */
export function supersetObserver(environmentId: string): ExchangeObserver {
  return (call, run) => {
    const endpoint = supersetEndpointClass(call.method, call.path);
    return timedCall(metrics.supersetRequests, metrics.supersetDuration, { environment_id: environmentId, endpoint }, run);
  };
}

/** git's smart-HTTP exchanges by what they do: ref discovery, fetch (upload-pack), push (receive-pack). */
export function gitOperation(url: string): 'discover' | 'fetch' | 'push' | 'other' {
  const u = new URL(url);
  if (u.pathname.endsWith('/info/refs')) return 'discover';
  if (u.pathname.endsWith('/git-upload-pack')) return 'fetch';
  if (u.pathname.endsWith('/git-receive-pack')) return 'push';
  return 'other';
}

export function observeGit<T extends { statusCode: number }>(url: string, run: () => Promise<T>): Promise<T> {
  return timedCall(metrics.gitRequests, metrics.gitDuration, { operation: gitOperation(url) }, run);
}

/** An OpenAI-compatible API's requests by endpoint (the path's last segments, from a fixed set). */
export function llmOperation(url: string): 'chat_completions' | 'models' | 'embeddings' | 'other' {
  const p = new URL(url).pathname;
  if (p.endsWith('/chat/completions')) return 'chat_completions';
  if (p.endsWith('/embeddings')) return 'embeddings';
  if (/\/models(\/[^/]+)?$/.test(p)) return 'models';
  return 'other';
}

/** A `fetch` for the LLM client that counts and times every request it sends through `inner`. */
export function observedLlmFetch(inner: typeof fetch = globalThis.fetch): typeof fetch {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return timedCall(metrics.llmRequests, metrics.llmDuration, { operation: llmOperation(url) }, () => inner(input, init));
  };
}
