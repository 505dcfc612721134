import { Client, Connection } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry/lib/client/index.js';
import proto, { type temporal as TemporalProto } from '@temporalio/proto';

const { temporal } = proto;
import type { Config } from './config.ts';
import { temporalConnectionOptions } from './temporal-connection.ts';
import { tracingEnabled } from './telemetry/tracing.ts';

/** A search attribute by name and indexed type (KEYWORD, KEYWORD_LIST, ...). */
export interface SearchAttributeSpec {
  name: string;
  type: string;
}

export { EMBEDDED_TEMPORAL_HOST, temporalAddress } from './temporal-connection.ts';

/** The API's client; the readiness check and search-attribute registration use its connection. */
export async function connectTemporalClient(config: Config): Promise<Client> {
  const connection = await Connection.connect({ ...temporalConnectionOptions(config), connectTimeout: '10 seconds' });
  // With tracing on, a workflow's start is a span whose context travels to the workflow in its headers.
  const interceptors = tracingEnabled(config) ? { workflow: [new OpenTelemetryWorkflowClientInterceptor()] } : undefined;
  return new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, interceptors });
}

const IndexedValueType = temporal.api.enums.v1.IndexedValueType;
const TYPE_MAP: Record<string, TemporalProto.api.enums.v1.IndexedValueType> = {
  KEYWORD: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
  KEYWORD_LIST: IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
};

/** Registers the project's search attributes when missing (idempotent; needed for external clusters). */
export async function ensureSearchAttributes(
  client: Client,
  namespace: string,
  attributes: readonly SearchAttributeSpec[],
): Promise<string[]> {
  const op = client.connection.operatorService;
  const existing = await op.listSearchAttributes({ namespace });
  const have = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = attributes.filter((k) => !have.has(k.name));
  if (missing.length === 0) return [];
  await op.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map((k) => [k.name, TYPE_MAP[k.type]])),
  });
  return missing.map((k) => k.name);
}
