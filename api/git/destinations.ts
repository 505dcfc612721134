/**
 * Where a git config and its repositories may point, checked before anything is stored: the
 * config's server and its REST API (github.com's is api.github.com) must be hosts
 * ALLOWED_UPSTREAM_HOSTS allows, and a repository's remote must be on its config's own origin, the
 * only server the config's token is sent to (lib/git/remote-http.ts, which checks again on the wire).
 */
import { assertDestinationAllowed, type EgressPolicy } from '../../lib/egress/policy.ts';
import { apiBase, type ProviderKind } from '../../lib/git/providers.ts';
import { assertTokenDestination } from '../../lib/git/remote-http.ts';

export async function assertConfigDestination(egress: EgressPolicy, provider: ProviderKind, baseUrl: string): Promise<void> {
  await assertDestinationAllowed(egress, baseUrl, 'body.base_url');
  await assertDestinationAllowed(egress, apiBase(provider, baseUrl), 'body.base_url');
}

export async function assertRemoteDestination(egress: EgressPolicy, remoteUrl: string, config: { base_url: string }): Promise<void> {
  assertTokenDestination(remoteUrl, config.base_url);
  await assertDestinationAllowed(egress, remoteUrl, 'body.config_id');
}
