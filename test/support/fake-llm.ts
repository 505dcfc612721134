// A local server speaking the OpenAI chat-completions protocol (POST <base>/chat/completions),
// deterministic, with the failures a real provider shows. Which behaviour a request meets is
// chosen by the dataset named in the prompt (so siblings in one task can differ), counting the
// requests per dataset:
//
//   ok                 a valid structured answer every time
//   rate_limit_once    429 with Retry-After: 1, then ok
//   rate_limit_long    429 with Retry-After: 3600 every time
//   error_500_once     500 with an OpenAI error body, then ok
//   error_500_always   500 every time
//   malformed_once     an answer whose content is not JSON, then ok
//   malformed_always   content that is not JSON every time
//   unknown_column     names a column the dataset does not have, then ok
//   slow_once          no answer the first time until the client gives up (closes the request), then ok
//   slow_always        no answer until the client gives up, every time
//
// A slow answer waits for the client's own timeout to close the request, never for a timer of
// its own: which side gives up first is decided by an event, whatever the machine's load.
//
// A request without the expected API key (when one is set) gets 401 like OpenAI's.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { detached } from '../../lib/detached.ts';

export type LlmBehaviour =
  | 'ok'
  | 'rate_limit_once'
  | 'rate_limit_long'
  | 'error_500_once'
  | 'error_500_always'
  | 'malformed_once'
  | 'malformed_always'
  | 'unknown_column'
  | 'slow_once'
  | 'slow_always';

export interface RecordedLlmRequest {
  authorization: string | undefined;
  model: string;
  dataset: string | null;
  body: any;
  status: number;
}

export interface FakeLlm {
  /** `http://127.0.0.1:<port>/v1` */
  baseUrl: string;
  requests: RecordedLlmRequest[];
  /** Behaviour for datasets whose name contains `match` (first match wins); others get `ok`. */
  behave(match: string, behaviour: LlmBehaviour): void;
  /** Require `Authorization: Bearer <key>`. */
  apiKey?: string;
  reset(): void;
  close(): Promise<void>;
}

const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

/** Answers nothing; settles once the client closed the request (its timeout), leaving the response unsent. */
const untilClientGivesUp = (res: ServerResponse) =>
  new Promise<void>((resolve) => {
    if (res.destroyed) return resolve();
    res.once('close', () => resolve());
  });

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The dataset of a documentation prompt (the user message is `{"dataset": {...}}`). */
function datasetOf(body: any): { name: string; columns: string[] } | null {
  for (const m of body?.messages ?? []) {
    if (m.role !== 'user' || typeof m.content !== 'string') continue;
    try {
      const parsed = JSON.parse(m.content);
      if (parsed?.dataset?.name) return { name: parsed.dataset.name, columns: (parsed.dataset.columns ?? []).map((c: any) => c.name) };
    } catch {
      // a follow-up message, not the dataset
    }
  }
  return null;
}

export function answerFor(dataset: { name: string; columns: string[] }, russian: boolean) {
  return {
    dataset_description: russian ? `Набор данных ${dataset.name}: продажи по дням.` : `Dataset ${dataset.name}: daily sales.`,
    columns: dataset.columns.map((c) => ({
      column_name: c,
      description: russian ? `Столбец ${c} набора ${dataset.name}.` : `Column ${c} of ${dataset.name}.`,
    })),
  };
}

/** `slowMs` is accepted for older callers and ignored: a slow answer waits for the client to give up. */
export async function startFakeLlm(opts: { apiKey?: string; slowMs?: number } = {}): Promise<FakeLlm> {
  const rules: Array<[string, LlmBehaviour]> = [];
  const counts = new Map<string, number>();
  const fake: FakeLlm = {
    baseUrl: '',
    requests: [],
    apiKey: opts.apiKey,
    behave(match, behaviour) {
      rules.push([match, behaviour]);
    },
    reset() {
      rules.length = 0;
      counts.clear();
      fake.requests.length = 0;
    },
    close: async () => undefined,
  };

  // Detached: a request handler cannot be awaited; a failing one is printed (and its test fails on the answer).
  const server = createServer((req, res) => detached('the fake LLM provider', answer(req, res), console));
  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const text = await readBody(req);
    if (req.method !== 'POST' || !/\/chat\/completions$/.test(req.url ?? ''))
      return json(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      return json(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
    }
    const dataset = datasetOf(body);
    const record: RecordedLlmRequest = {
      authorization: req.headers.authorization,
      model: body.model,
      dataset: dataset?.name ?? null,
      body,
      status: 200,
    };
    fake.requests.push(record);
    const reply = (status: number, payload: unknown, headers: Record<string, string> = {}) => {
      record.status = status;
      if (!res.destroyed) json(res, status, payload, headers);
    };
    if (fake.apiKey && req.headers.authorization !== `Bearer ${fake.apiKey}`) {
      return reply(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } });
    }

    const russian = (body.messages ?? []).some((m: any) => m.role === 'system' && String(m.content).includes('Russian'));
    const complete = (content: string) =>
      reply(200, {
        id: `chatcmpl-${fake.requests.length}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: `${body.model}-2026`,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: {
          prompt_tokens: Math.ceil(text.length / 4),
          completion_tokens: Math.ceil(content.length / 4),
          total_tokens: Math.ceil(text.length / 4) + Math.ceil(content.length / 4),
        },
      });

    if (!dataset) return complete(JSON.stringify({ ok: true })); // the provider test
    const n = (counts.get(dataset.name) ?? 0) + 1;
    counts.set(dataset.name, n);
    const behaviour = rules.find(([m]) => dataset.name.includes(m))?.[1] ?? 'ok';
    const ok = () => complete(JSON.stringify(answerFor(dataset, russian)));
    switch (behaviour) {
      case 'rate_limit_once':
        return n === 1 ? reply(429, { error: { message: 'Rate limit reached', type: 'rate_limit_error' } }, { 'retry-after': '1' }) : ok();
      case 'rate_limit_long':
        return reply(429, { error: { message: 'Rate limit reached', type: 'rate_limit_error' } }, { 'retry-after': '3600' });
      case 'error_500_once':
        return n === 1 ? reply(500, { error: { message: 'The server had an error', type: 'server_error' } }) : ok();
      case 'error_500_always':
        return reply(500, { error: { message: 'The server had an error', type: 'server_error' } });
      case 'malformed_once':
        return n === 1 ? complete('Sure! Here is the documentation: {"dataset_description": "unterminated') : ok();
      case 'malformed_always':
        return complete('I cannot answer in JSON, sorry.');
      case 'unknown_column':
        return n === 1
          ? complete(JSON.stringify({ dataset_description: 'x', columns: [{ column_name: 'no_such_column', description: 'y' }] }))
          : ok();
      case 'slow_once':
        return n === 1 ? untilClientGivesUp(res) : ok();
      case 'slow_always':
        return untilClientGivesUp(res);
      default:
        return ok();
    }
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}
