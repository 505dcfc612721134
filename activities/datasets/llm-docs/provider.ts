import type { NextAction } from '../../../contracts/outcomes.ts';
import { DEFAULT_PROVIDER_ID, type LlmConnection } from '../../../db/llm-providers/store.ts';
import { NotFoundError } from '../../../lib/errors.ts';
import type { LlmError, LlmPolicy } from '../../../lib/llm/chat.ts';
import { PROMPT_VERSION } from '../../../lib/llm/dataset-docs.ts';
import type { ActivityDeps } from '../../deps.ts';
import { failItem } from '../../../domain/failures/index.ts';

/** What documenting needs beside the worker's deps: the LLM client's retry policy, when a test shortens it. */
export type LlmDocsDeps = ActivityDeps & { llmPolicy?: LlmPolicy };

/**
 * The provider's connection, its API key decrypted here by provider id (never part of the
 * workflow's input, result or history); an unknown provider fails the task.
 */
export async function provider(deps: ActivityDeps, providerId: string): Promise<LlmConnection> {
  try {
    return await deps.stores.llmProviders.connection(providerId, deps.config);
  } catch (err) {
    if (err instanceof NotFoundError) {
      failItem({
        step: 'provider',
        error:
          providerId === DEFAULT_PROVIDER_ID
            ? 'the default LLM provider is not configured (LLM_BASE_URL, LLM_MODEL)'
            : `LLM provider ${providerId} does not exist (any more)`,
        next_actions: [
          {
            action: 'choose_provider',
            description: 'List the providers (GET /api/admin/llm-providers) and start the task with one that exists',
          },
        ],
      });
    }
    throw err;
  }
}

/** Which provider, model and prompt a task uses, for its result (never the key). */
export async function describeLlmProvider(
  deps: ActivityDeps,
  input: { providerId: string },
): Promise<{ id: string; name: string; model: string; promptVersion: string }> {
  const p = await provider(deps, input.providerId);
  return { id: p.id, name: p.name, model: p.model, promptVersion: PROMPT_VERSION };
}

/** What to do about a provider's failure, by its kind. */
export function llmActions(err: LlmError, conn: LlmConnection): NextAction[] {
  const fixProvider: NextAction = {
    action: 'fix_provider',
    description: `Check provider '${conn.name}': its base URL, model and API key (PUT /api/admin/llm-providers/${conn.id}; test it with POST /api/admin/llm-providers/${conn.id}/test)`,
  };
  switch (err.kind) {
    case 'rate_limited':
      return [
        {
          action: 'retry_later',
          description: 'The provider is rate limiting; run the failed datasets again later (the task result carries the request)',
        },
      ];
    case 'unavailable':
    case 'timeout':
      return [
        {
          action: 'retry_later',
          description: 'The provider failed or did not answer in time; run the failed datasets again, or raise its timeout_seconds',
        },
        fixProvider,
      ];
    case 'invalid_answer':
      return [
        {
          action: 'choose_model',
          description: 'The model did not follow the answer schema; run again, or use a model with structured-output support',
        },
      ];
    case 'refused':
      return [fixProvider];
  }
}
