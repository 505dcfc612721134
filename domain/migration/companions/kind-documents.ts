/**
 * A kind's git document (./documents.ts writes every kind's, ./documents-replay.ts reads them back):
 * what a kind module declares beside its `run` (./kind.ts), and the helpers the kinds share. A kind
 * writes its documents from what its own reads recorded in a capture, one YAML per companion under
 * `companions/<kind>/`, ids replaced by names and uuids; its replay turns them back into the answers
 * those reads get, so a deploy or a restore runs the kind over them as over the environment.
 */
import type { ObjectMeta } from '../../../lib/superset/resources/object-meta.ts';
import type { ReportSchedule } from '../../../lib/superset/resources/reports.ts';
import type { UpstreamAccount } from '../../../lib/superset/types.ts';
import { type Recording, recordingKey } from './recording-key.ts';

/** An account as the documents name it (never its id). */
export type Person = Pick<UpstreamAccount, 'username' | 'email' | 'first_name' | 'last_name' | 'display_name'>;

/** What a kind's writer is given: the capture's recording and what it read of the dashboard. */
export interface CapturedReads {
  recording: Recording;
  dashboardId: number;
  dashboard: ObjectMeta;
  charts: ObjectMeta[];
  datasets: ObjectMeta[];
  /** The names the kind's items gave (which templates and queries are the dashboard's). */
  names: ReadonlySet<string>;
  /** Database id → uuid. */
  databases: Map<number, string>;
  /** The source account an owner entry names. */
  who(o: ReportSchedule['owners'][number]): UpstreamAccount;
}

/** What a kind's replay is given: the dashboard, charts and datasets the bundle's files make, and where to put answers. */
export interface Replaying {
  /** A kind adds what its documents say of them (owners, roles, tags, a theme); they are answered after every kind's replay. */
  dashboard: ObjectMeta;
  charts: ObjectMeta[];
  datasets: ObjectMeta[];
  set(resource: string, method: string, args: unknown[], answer: unknown): void;
  /** The replay's id of a database by uuid (as the caller numbers them; another one for a database it does not know). */
  dbId(uuid: string | null): number | null;
  /** The owner entry of a person (as an object's owners and a report's list them), the account kept for `users.all`. */
  ownerOf(p: Person): ObjectMeta['owners'][number];
}

export interface CompanionDocuments<Doc> {
  /** One `[name, document]` per companion (the file is `companions/<kind>/<name>.yaml`), in a stable order. */
  write(from: CapturedReads): Array<readonly [string, Doc]>;
  /** The documents read back (sorted by file) into the answers of the kind's reads. */
  replay(docs: Doc[], into: Replaying): void;
}

/** A recorded read's answer; undefined when it was not read, or answered 404. */
export function answer<T>(r: Recording, resource: string, method: string, ...args: unknown[]): T | undefined {
  const hit = r[recordingKey(resource, method, args)];
  return hit && 'answer' in hit ? (hit.answer as T) : undefined;
}

/** Every recorded answer of `resource.method`, with its arguments. */
export function answersOf(r: Recording, resource: string, method: string): Array<{ args: unknown[]; answer: unknown }> {
  const prefix = `${resource}.${method}(`;
  return Object.entries(r).flatMap(([key, hit]) =>
    key.startsWith(prefix) && 'answer' in hit ? [{ args: JSON.parse(key.slice(prefix.length, -1)) as unknown[], answer: hit.answer }] : [],
  );
}

export const person = (a: Person): Person => ({
  username: a.username,
  email: a.email,
  first_name: a.first_name,
  last_name: a.last_name,
  display_name: a.display_name,
});

export const sorted = (xs: Iterable<string>) => [...new Set(xs)].sort();
