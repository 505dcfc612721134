/**
 * A provider's webhook delivery: is it signed with the config's secret (compared in constant
 * time), which delivery it is (its id, for replay safety), and whether it says a pull request
 * was merged.
 *
 * Gitea: `X-Gitea-Signature` (hex HMAC-SHA256 of the body), `X-Gitea-Delivery`, `X-Gitea-Event`.
 * GitHub: `X-Hub-Signature-256` (`sha256=` and the hex HMAC-SHA256), `X-GitHub-Delivery`, `X-GitHub-Event`.
 * GitLab: `X-Gitlab-Token` (the secret itself), `X-Gitlab-Event-UUID`, `X-Gitlab-Event`.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { ProviderKind } from './providers.ts';

type Headers = Record<string, string | string[] | undefined>;

const header = (h: Headers, name: string): string | null => {
  const v = h[name.toLowerCase()];
  return typeof v === 'string' ? v : Array.isArray(v) ? (v[0] ?? null) : null;
};

/** Equal in constant time (for equal lengths; a length differing says nothing of the secret's bytes). */
function sameBytes(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** Whether the delivery carries the config's secret as its provider signs with it. */
export function signatureValid(provider: ProviderKind, headers: Headers, rawBody: string, secret: string): boolean {
  if (provider === 'gitlab') {
    const token = header(headers, 'x-gitlab-token');
    return token !== null && sameBytes(Buffer.from(token), Buffer.from(secret));
  }
  const mac = createHmac('sha256', secret).update(rawBody, 'utf8').digest();
  const sent =
    provider === 'github' ? header(headers, 'x-hub-signature-256')?.replace(/^sha256=/, '') : header(headers, 'x-gitea-signature');
  if (!sent || !/^[0-9a-f]{64}$/i.test(sent)) return false;
  return sameBytes(Buffer.from(sent, 'hex'), mac);
}

/** The provider's id of this delivery (a redelivery of the same event keeps it), or null when absent. */
export function deliveryId(provider: ProviderKind, headers: Headers): string | null {
  const name = provider === 'gitlab' ? 'x-gitlab-event-uuid' : provider === 'github' ? 'x-github-delivery' : 'x-gitea-delivery';
  const v = header(headers, name)?.trim();
  return v && v.length <= 200 ? v : null;
}

export interface MergeEvent {
  /** `owner/name` of the repository on the server. */
  repository: string;
  number: number;
  merge_commit_sha: string;
  base_branch: string;
}

export type WebhookEvent = { kind: 'merged'; merge: MergeEvent } | { kind: 'ignored'; reason: string };

const obj = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** What a delivery says: a merged pull request, or why it is none of Switchyard's business. */
export function parseEvent(provider: ProviderKind, headers: Headers, body: unknown): WebhookEvent {
  const b = obj(body);
  if (provider === 'gitlab') {
    const a = obj(b.object_attributes);
    if (b.object_kind !== 'merge_request') return { kind: 'ignored', reason: `event ${text(b.object_kind) || '?'} is not a merge request` };
    if (a.action !== 'merge' && a.state !== 'merged')
      return { kind: 'ignored', reason: `merge request ${text(a.action) || 'event'}, not merged` };
    const sha = text(a.merge_commit_sha) || text(obj(a.last_commit).id);
    return merged(text(obj(b.project).path_with_namespace), a.iid, sha, text(a.target_branch));
  }
  const event = header(headers, provider === 'github' ? 'x-github-event' : 'x-gitea-event');
  if (event !== 'pull_request') return { kind: 'ignored', reason: `event ${event ?? '?'} is not a pull request's` };
  const pr = obj(b.pull_request);
  if (b.action !== 'closed' || pr.merged !== true)
    return { kind: 'ignored', reason: `pull request ${text(b.action) || 'event'}, not merged` };
  return merged(text(obj(b.repository).full_name), pr.number ?? b.number, text(pr.merge_commit_sha), text(obj(pr.base).ref));
}

function merged(repository: string, number: unknown, sha: string, base: string): WebhookEvent {
  const n = typeof number === 'number' ? number : Number(number);
  if (!repository || !Number.isInteger(n) || n <= 0 || !/^[0-9a-f]{40}$/i.test(sha) || !base)
    return { kind: 'ignored', reason: 'the merge event lacks its repository, number, merge commit or base branch' };
  return { kind: 'merged', merge: { repository, number: n, merge_commit_sha: sha.toLowerCase(), base_branch: base } };
}
