/**
 * isomorphic-git's HTTP client for a working copy's remote, on undici: every connection follows
 * the egress policy (ALLOWED_UPSTREAM_HOSTS), redirects are never followed, and a call carrying a
 * git config's token goes only to that config's own origin (scheme, host and port). A remote
 * elsewhere is refused before anything is sent (`tokenDestination`), so a repository's remote can
 * never carry the token to another server.
 */
import { STATUS_CODES } from 'node:http';
import type { GitHttpRequest, GitHttpResponse, HttpClient } from 'isomorphic-git';
import { request } from 'undici';
import { egressDispatcher } from '../egress/connect.ts';
import { EgressPolicy } from '../egress/policy.ts';
import { observeGit } from '../telemetry/upstream.ts';
import { GitRemoteError } from './git-errors.ts';

/** The origin of a URL as the URL parser spells it (default ports dropped, host lower-cased). */
function originOf(url: string): string {
  return new URL(url).origin;
}

/**
 * Refuses (409 `remote_host_mismatch`) a remote whose origin is not the git config's: the token
 * of a config is sent to its own server only.
 */
export function assertTokenDestination(remoteUrl: string, configBaseUrl: string): void {
  const remote = originOf(remoteUrl);
  const own = originOf(configBaseUrl);
  if (remote !== own)
    throw new GitRemoteError(
      'remote_host_mismatch',
      `the repository's remote is on ${remote}, not on its git config's server ${own}: the config's token is sent to its own server only; init the repository again with a config for ${remote}`,
      409,
      { remote_origin: remote, config_origin: own },
    );
}

async function collect(body: NonNullable<GitHttpRequest['body']>): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of body as AsyncIterable<Uint8Array>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * The client for one working-copy call. `tokenOrigin` is the git config's origin when a token
 * goes along: any request elsewhere (a remote that moved, a redirect's target) is refused.
 */
export function remoteHttp(opts: { egress?: EgressPolicy; tokenOrigin?: string }): HttpClient {
  const egress = opts.egress ?? EgressPolicy.OPEN;
  const dispatcher = egress.restricted ? egressDispatcher(egress) : undefined;
  return {
    async request(req: GitHttpRequest): Promise<GitHttpResponse> {
      if (opts.tokenOrigin) assertTokenDestination(req.url, opts.tokenOrigin);
      const method = req.method ?? 'GET';
      // Sent whole, with its Content-Length (git servers expect one for a pack).
      const body = req.body ? await collect(req.body) : undefined;
      const res = await observeGit(req.url, () =>
        request(req.url, { method: method as 'GET' | 'POST', headers: req.headers, body, dispatcher, signal: req.signal }),
      );
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(res.headers))
        if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value;
      return {
        url: req.url,
        method,
        statusCode: res.statusCode,
        statusMessage: STATUS_CODES[res.statusCode] ?? '',
        headers,
        body: (res.body as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]() as AsyncIterableIterator<Uint8Array>,
      };
    },
  };
}
