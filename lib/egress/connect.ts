/**
 * The egress policy (./policy.ts) on the wire: every outbound connection's host goes through the
 * policy's `addressesFor` as the socket's DNS lookup, so the address that was checked is the
 * address connected to (a name that resolves elsewhere between a check and the connection, DNS
 * rebinding, cannot slip past). A literal address never reaches a lookup (net connects to it
 * directly), so the connector checks it first.
 *
 * For undici (the Superset client's pools, fetch for git providers, LLM providers and the OIDC
 * provider) and for node:http agents (the S3 client). Without a policy every function here
 * returns what the client would use anyway.
 */
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { normaliseHost, type EgressPolicy } from './policy.ts';

/** net.connect's `lookup`, answering only with addresses the policy allows (HostNotAllowedError otherwise). */
export function egressLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    policy.addressesFor(hostname).then(
      (addresses) => {
        const family = typeof options.family === 'number' && options.family ? options.family : undefined;
        const usable = family ? addresses.filter((a) => a.family === family) : addresses;
        if (!usable.length) {
          const err = Object.assign(new Error(`${hostname} has no IPv${family} address`), { code: 'ENOTFOUND' });
          callback(err, '', 0);
        } else if (options.all) callback(null, usable);
        else callback(null, usable[0].address, usable[0].family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
}

/** An undici connector (Pool, Client or Agent `connect`) that connects only where the policy allows. */
export function egressConnector(policy: EgressPolicy, options: buildConnector.BuildOptions = {}): buildConnector.connector {
  if (!policy.restricted) return buildConnector(options);
  const connect = buildConnector({ ...options, lookup: egressLookup(policy) } as buildConnector.BuildOptions);
  return (opts, callback) => {
    const host = normaliseHost(opts.hostname);
    if (!isIP(host)) return connect(opts, callback);
    policy.addressesFor(host).then(
      () => connect(opts, callback),
      (err: Error) => callback(err, null),
    );
  };
}

const agents = new WeakMap<EgressPolicy, Agent>();

/** One shared undici Agent per policy (its connections are reused across calls). */
export function egressDispatcher(policy: EgressPolicy): Agent {
  let agent = agents.get(policy);
  if (!agent) agents.set(policy, (agent = new Agent({ connect: egressConnector(policy) })));
  return agent;
}

/** A fetch whose connections follow the policy (the global fetch when there is none). */
export function egressFetch(policy: EgressPolicy): typeof fetch {
  if (!policy.restricted) return globalThis.fetch;
  const dispatcher = egressDispatcher(policy);
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(
      input as Parameters<typeof undiciFetch>[0],
      { ...(init as object), dispatcher } as Parameters<typeof undiciFetch>[1],
    )) as unknown as typeof fetch;
}

/** node:http(s) agents whose connections follow the policy (for clients built on them, the S3 SDK). */
export function egressAgents(policy: EgressPolicy): { httpAgent: http.Agent; httpsAgent: https.Agent } | undefined {
  if (!policy.restricted) return undefined;
  const lookup = egressLookup(policy);
  // An agent passes its options to every connection it makes; a literal-address endpoint is
  // checked at start (lib/config.ts), as it cannot change without a restart.
  return {
    httpAgent: new http.Agent({ keepAlive: true, lookup } as http.AgentOptions),
    httpsAgent: new https.Agent({ keepAlive: true, lookup } as https.AgentOptions),
  };
}
