/**
 * How a recording (./recording.ts) keys a read: apart from the recording clients, so the kinds'
 * documents (./kind-documents.ts) can name reads without importing the registry's derived lists.
 */

/** Each read's answer by `resource.method(args as JSON)`; a 404 as `{ not_found: message }`. */
export type Recording = Record<string, { answer: unknown } | { not_found: string }>;

/** The key a read is recorded under (a recording made otherwise than by recordingClient: ./documents-replay.ts). */
export const recordingKey = (resource: string, method: string, args: unknown[]) => `${resource}.${method}(${JSON.stringify(args)})`;
