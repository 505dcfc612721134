/**
 * Structured answers from any OpenAI-compatible chat-completions endpoint, through the official
 * `openai` client pointed at the provider's base URL.
 *
 * The failure policy is explicit rather than the client's built-in retries (which treat a
 * timeout like an overload and follow any Retry-After, however long):
 * - 429, 408, 409, 5xx and connection failures: retried with exponential backoff up to
 *   `maxRetries` times; a `Retry-After` (or `retry-after-ms`) is honoured up to
 *   `maxRetryAfterSeconds`, and a longer one ends the call at once (nobody waits an hour inside
 *   a task);
 * - a timeout: retried once;
 * - an answer that is not JSON, or not valid for the schema: asked once more with the validation
 *   error, then given up;
 * - anything else the provider refuses (401 key, 404 model, 400 request): no retry.
 * The API key is only ever handed to the client; it is never part of an error message.
 * With an egress policy the client's connections go through it; a refused host ends the call at
 * once (`refused`, nothing sent, no retry).
 */
import type OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { egressFetch } from '../egress/connect.ts';
import { egressRefusal, type EgressPolicy } from '../egress/policy.ts';
import { lazyModule } from '../lazy.ts';
import { observedLlmFetch } from '../telemetry/upstream.ts';

/** The official client loads with the first LLM call, not at start (most processes never make one). */
const loadOpenAI = lazyModule(async () => (await import('openai')).default);

export interface LlmEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
  timeoutSeconds: number;
  /** Where the provider may be (ALLOWED_UPSTREAM_HOSTS); none: anywhere. */
  egress?: EgressPolicy;
}

export interface LlmPolicy {
  maxRetries: number;
  /** Times a request that timed out is sent again (default 1). */
  timeoutRetries?: number;
  maxRetryAfterSeconds: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_LLM_POLICY: LlmPolicy = { maxRetries: 4, maxRetryAfterSeconds: 60, baseDelayMs: 1_000, maxDelayMs: 30_000 };

export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A JSON answer's schema: its JSON Schema for the provider, and the check applied to what comes back. */
export interface AnswerSchema<T> {
  name: string;
  jsonSchema: Record<string, unknown>;
  /** The value, or why it is not acceptable (sent back to the model when asking again). */
  check(value: unknown): { ok: true; value: T } | { ok: false; error: string };
}

export interface AttemptEvent {
  attempt: number;
  outcome: 'answered' | 'invalid_answer' | 'rate_limited' | 'unavailable' | 'timeout';
  detail: string;
  waitMs?: number;
}

export interface CallHooks {
  /** Called before every request and during waits (an activity heartbeats here). */
  heartbeat?(): void;
  onAttempt?(e: AttemptEvent): void;
  signal?: AbortSignal;
  sleep?(ms: number, signal?: AbortSignal): Promise<void>;
}

export type LlmFailureKind = 'rate_limited' | 'unavailable' | 'timeout' | 'invalid_answer' | 'refused';

export class LlmError extends Error {
  override name = 'LlmError';
  readonly kind: LlmFailureKind;
  readonly status?: number;
  /** The provider's own message, when it gave one. */
  readonly providerMessage?: string;
  readonly attempts: number;
  readonly usage: TokenUsage;
  constructor(
    kind: LlmFailureKind,
    message: string,
    opts: { status?: number; providerMessage?: string; attempts: number; usage: TokenUsage },
  ) {
    super(message);
    this.kind = kind;
    this.status = opts.status;
    this.providerMessage = opts.providerMessage;
    this.attempts = opts.attempts;
    this.usage = opts.usage;
  }
}

export interface StructuredAnswer<T> {
  value: T;
  usage: TokenUsage;
  /** Requests sent (retries included). */
  attempts: number;
  /** The model the provider says answered. */
  model: string;
}

const RETRYABLE_STATUS = (s: number) => s === 408 || s === 409 || s === 429 || s >= 500;

function sleepFor(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason as Error);
      },
      { once: true },
    );
  });
}

export async function createLlmClient(endpoint: Omit<LlmEndpoint, 'model'>): Promise<OpenAI> {
  const OpenAIClient = await loadOpenAI();
  return new OpenAIClient({
    baseURL: endpoint.baseUrl,
    // Keyless local servers still get a bearer header; the client refuses an empty key.
    apiKey: endpoint.apiKey || 'none',
    organization: null,
    project: null,
    timeout: Math.max(1, endpoint.timeoutSeconds) * 1000,
    maxRetries: 0,
    logLevel: 'off',
    // Every request counted and timed (lib/telemetry/upstream.ts), through the egress policy when there is one.
    fetch: observedLlmFetch(endpoint.egress?.restricted ? egressFetch(endpoint.egress) : undefined),
  });
}

/** Seconds (or ms) the provider asked to wait, from `retry-after-ms` or `Retry-After` (seconds or an HTTP date). */
export function retryAfterMs(headers: Headers | undefined): number | undefined {
  if (!headers) return undefined;
  const ms = Number(headers.get('retry-after-ms'));
  if (headers.get('retry-after-ms') && Number.isFinite(ms) && ms >= 0) return ms;
  const raw = headers.get('retry-after');
  if (!raw) return undefined;
  const seconds = Number(raw);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

/** Counts across one structured call's attempts. */
interface CallState {
  attempts: number;
  transientRetries: number;
  timeouts: number;
}
type Fail = (kind: LlmFailureKind, message: string, extra?: { status?: number; providerMessage?: string }) => LlmError;

/**
 * After a request that got no answer: returns once it is time to ask again (a timeout asked once
 * more, a transient failure after its backoff or Retry-After), or throws the typed failure.
 */
async function retryOrGiveUp(
  OpenAI: Awaited<ReturnType<typeof loadOpenAI>>,
  err: unknown,
  ctx: { endpoint: LlmEndpoint; policy: LlmPolicy; hooks: CallHooks; sleep: NonNullable<CallHooks['sleep']>; state: CallState; fail: Fail },
): Promise<void> {
  const { endpoint, policy, hooks, sleep, state, fail } = ctx;
  const attempts = state.attempts;
  const refused = egressRefusal(err);
  if (refused) throw fail('refused', refused.message);
  if (err instanceof OpenAI.APIConnectionTimeoutError) {
    state.timeouts++;
    const detail = `no answer within ${endpoint.timeoutSeconds} s`;
    if (state.timeouts > (policy.timeoutRetries ?? 1)) {
      hooks.onAttempt?.({ attempt: attempts, outcome: 'timeout', detail: `${detail}; given up` });
      throw fail(
        'timeout',
        `the provider did not answer within ${endpoint.timeoutSeconds} s${state.timeouts > 1 ? `, ${state.timeouts} times` : ''}`,
      );
    }
    hooks.onAttempt?.({ attempt: attempts, outcome: 'timeout', detail: `${detail}; asking once more` });
    return;
  }
  const status = err instanceof OpenAI.APIError ? err.status : undefined;
  const transient =
    err instanceof OpenAI.APIConnectionError || (status !== undefined && RETRYABLE_STATUS(status)) || !(err instanceof OpenAI.APIError);
  const providerMessage = providerMessageOf(OpenAI, err);
  if (!transient)
    throw fail('refused', `the provider refused the request (HTTP ${status}): ${providerMessage}`, { status, providerMessage });
  const kind = status === 429 ? 'rate_limited' : 'unavailable';
  const what = status
    ? `HTTP ${status}`
    : err instanceof OpenAI.APIConnectionError
      ? 'connection failed'
      : `unreadable answer (${providerMessage})`;
  if (state.transientRetries >= policy.maxRetries) {
    hooks.onAttempt?.({ attempt: attempts, outcome: kind, detail: `${what}; no retries left` });
    throw fail(kind, `the provider kept failing (${what}) after ${attempts} attempts: ${providerMessage}`, { status, providerMessage });
  }
  const asked = err instanceof OpenAI.APIError ? retryAfterMs(err.headers) : undefined;
  if (asked !== undefined && asked > policy.maxRetryAfterSeconds * 1000) {
    hooks.onAttempt?.({ attempt: attempts, outcome: kind, detail: `${what}; asked to wait ${Math.ceil(asked / 1000)} s` });
    throw fail(
      kind,
      `the provider asked to wait ${Math.ceil(asked / 1000)} s (more than ${policy.maxRetryAfterSeconds} s) before asking again`,
      {
        status,
        providerMessage,
      },
    );
  }
  const wait = asked ?? Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** state.transientRetries);
  state.transientRetries++;
  hooks.onAttempt?.({
    attempt: attempts,
    outcome: kind,
    detail: `${what}; waiting ${(wait / 1000).toFixed(1)} s${asked !== undefined ? ' as Retry-After asks' : ''}`,
    waitMs: wait,
  });
  await waitWithHeartbeat(wait, sleep, hooks);
}

/** Asks for one JSON object following `schema`, under the policy above. */
export async function completeStructured<T>(
  endpoint: LlmEndpoint,
  messages: ChatCompletionMessageParam[],
  schema: AnswerSchema<T>,
  policy: LlmPolicy = DEFAULT_LLM_POLICY,
  hooks: CallHooks = {},
): Promise<StructuredAnswer<T>> {
  const OpenAI = await loadOpenAI();
  const client = await createLlmClient(endpoint);
  const sleep = hooks.sleep ?? sleepFor;
  const usage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const conversation = [...messages];
  const state: CallState = { attempts: 0, transientRetries: 0, timeouts: 0 };
  let corrections = 0;
  const fail: Fail = (kind, message, extra = {}) => new LlmError(kind, message, { ...extra, attempts: state.attempts, usage });

  for (;;) {
    hooks.heartbeat?.();
    const attempts = ++state.attempts;
    let completion: OpenAI.Chat.Completions.ChatCompletion;
    try {
      completion = await client.chat.completions.create(
        {
          model: endpoint.model,
          messages: conversation,
          temperature: 0,
          response_format: { type: 'json_schema', json_schema: { name: schema.name, schema: schema.jsonSchema, strict: true } },
        },
        { signal: hooks.signal },
      );
    } catch (err) {
      if (hooks.signal?.aborted) throw err;
      await retryOrGiveUp(OpenAI, err, { endpoint, policy, hooks, sleep, state, fail });
      continue;
    }

    addUsage(usage, completion.usage);
    const content = completion.choices?.[0]?.message?.content ?? '';
    const checked = checkContent(content, schema);
    if (checked.ok) {
      hooks.onAttempt?.({ attempt: attempts, outcome: 'answered', detail: `${usage.total_tokens} tokens so far` });
      return { value: checked.value, usage, attempts, model: completion.model || endpoint.model };
    }
    if (corrections >= 1) {
      hooks.onAttempt?.({ attempt: attempts, outcome: 'invalid_answer', detail: `${checked.error}; given up` });
      // The model's own words, shortened, so a person sees what it answered.
      throw fail('invalid_answer', `the answer was not valid for the schema, twice: ${checked.error}`, {
        providerMessage: content.slice(0, 500),
      });
    }
    corrections++;
    hooks.onAttempt?.({ attempt: attempts, outcome: 'invalid_answer', detail: `${checked.error}; asking again with the error` });
    conversation.push(...correction(content, checked.error, schema.name));
  }
}

/** Adds one completion's tokens to the call's (a server that gives no total gets prompt plus completion). */
function addUsage(usage: TokenUsage, add: OpenAI.Chat.Completions.ChatCompletion['usage']): void {
  usage.prompt_tokens += add?.prompt_tokens ?? 0;
  usage.completion_tokens += add?.completion_tokens ?? 0;
  usage.total_tokens += add?.total_tokens ?? (add?.prompt_tokens ?? 0) + (add?.completion_tokens ?? 0);
}

/** The invalid answer (shortened) and what was wrong with it, for the model to answer again. */
function correction(content: string, error: string, schemaName: string): ChatCompletionMessageParam[] {
  return [
    { role: 'assistant', content: content.slice(0, 20_000) },
    {
      role: 'user',
      content: `That answer cannot be used: ${error}. Answer again with only the JSON object that follows the schema "${schemaName}".`,
    },
  ];
}

function checkContent<T>(content: string, schema: AnswerSchema<T>): { ok: true; value: T } | { ok: false; error: string } {
  let parsed: unknown;
  // Some servers wrap JSON in a Markdown fence even when asked for JSON only.
  const text = content.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, '$1');
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, error: `it is not valid JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  return schema.check(parsed);
}

function providerMessageOf(OpenAI: typeof import('openai').default, err: unknown): string {
  if (err instanceof OpenAI.APIError) {
    const body = err.error as { message?: unknown; error?: { message?: unknown } } | undefined;
    const m =
      typeof body?.message === 'string' ? body.message : typeof body?.error?.message === 'string' ? body.error.message : err.message;
    return String(m).slice(0, 500);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 500);
}

async function waitWithHeartbeat(ms: number, sleep: NonNullable<CallHooks['sleep']>, hooks: CallHooks): Promise<void> {
  let left = ms;
  while (left > 0) {
    const step = Math.min(left, 5_000);
    await sleep(step, hooks.signal);
    hooks.heartbeat?.();
    left -= step;
  }
}
