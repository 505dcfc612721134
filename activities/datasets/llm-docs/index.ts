import { documentDataset, type DocumentDatasetInput } from './document.ts';
import { describeLlmProvider, type LlmDocsDeps } from './provider.ts';

export type { DocumentDatasetInput };

/**
 * LLM documentation: per dataset, gather its context, ask the provider for descriptions as
 * structured JSON, and store them as suggestions for a person to review. Nothing is written to
 * Superset here. The provider's API key is read by provider id inside the activity (never part
 * of the workflow's input, result or history) and given only to the LLM client.
 */
export function createLlmDocsActivities(deps: LlmDocsDeps) {
  return {
    describeLlmProvider: (input: { providerId: string }) => describeLlmProvider(deps, input),
    documentDataset: (input: DocumentDatasetInput) => documentDataset(deps, input),
  };
}
