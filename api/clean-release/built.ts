/**
 * Artifacts built elsewhere (a CI job's export zip of one dashboard, with its sha256 and the git
 * remote and commit it claims to come from). The zip's digest is checked before anything else (a
 * mismatch is the caller's 400 and changes nothing); the zip is unpacked by the one decider
 * (filesFromExport over lib/archive/unzip.ts, within the bundle budget); the claimed source is
 * fetched only when the trusted registry vouches for its host, through the confined working copy
 * and the egress policy, into a scratch folder that is removed afterwards; the zip's files are
 * then held to the commit's. What cannot be vouched for is not refused here: it is recorded on the
 * artifact as unverified, with the reason, and prepare and checks make it a blocking violation.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuiltSource } from '../../contracts/clean-release.ts';
import type { GitConfigRow } from '../../db/git/configs.ts';
import type { Stores } from '../../db/stores.ts';
import type { Config } from '../../lib/config.ts';
import { BundleError } from '../../lib/bundles/bundle.ts';
import { maxBundleBytes } from '../../lib/bundles/limit.ts';
import { portableDigest } from '../../lib/clean-release/digest.ts';
import { isTrusted } from '../../lib/clean-release/hosts.ts';
import { egressPolicy } from '../../lib/egress/policy.ts';
import { AppError } from '../../lib/errors.ts';
import { filesFromExport } from '../../lib/git/dashboard-files.ts';
import { authUsername } from '../../lib/git/providers.ts';
import { WorkingCopy } from '../../lib/git/working-copy.ts';
import type { Credentials } from '../../lib/git/working-copy-types.ts';

export interface BuiltArtifactInput {
  zip_base64: string;
  sha256: string;
  source: { remote: string; commit: string };
}

export interface ReadBuilt {
  files: Map<string, string>;
  uuid: string;
  title: string | null;
  host: { host: string; where: string };
  source: BuiltSource;
}

const SCRATCH_AUTHOR = { name: 'Switchyard', email: 'switchyard@localhost' };

/** What reading a built artifact uses of the API's context. */
interface BuiltDeps {
  config: Config;
  stores: Stores;
}

/** The zip's files, once its bytes digest to the claimed sha256 (400 otherwise: nothing is stored). */
function unpack(app: BuiltDeps, input: BuiltArtifactInput, index: number) {
  const bytes = Buffer.from(input.zip_base64, 'base64');
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== input.sha256)
    throw new AppError(
      400,
      'artifact_digest_mismatch',
      'Bad Request',
      `built[${index}]: the zip digests to sha256 ${actual}, not the ${input.sha256} it claims`,
      {
        extra: { index, actual_sha256: actual, claimed_sha256: input.sha256 },
      },
    );
  try {
    return filesFromExport(new Uint8Array(bytes), maxBundleBytes(app.config));
  } catch (err) {
    if (!(err instanceof BundleError)) throw err;
    throw new AppError(400, 'source_unreadable', 'Bad Request', `built[${index}]: the zip cannot be read: ${err.message}`);
  }
}

/** The token of the git config on the remote's origin, if one is registered (it is sent to that origin only). */
function credentialsFor(app: BuiltDeps, configs: GitConfigRow[], remote: string): Credentials | null {
  const origin = new URL(remote).origin;
  const config = configs.find((c) => new URL(c.base_url).origin === origin);
  if (!config) return null;
  return { username: authUsername(config.provider), token: app.stores.gitConfigs.token(config), origin };
}

/** The commit's files as the remote holds them, fetched into a scratch working copy that is removed afterwards. */
async function filesAtRemote(app: BuiltDeps, remote: string, commit: string): Promise<Map<string, string>> {
  const configs = await app.stores.gitConfigs.list();
  const origin = new URL(remote).origin;
  const branch = configs.find((c) => new URL(c.base_url).origin === origin)?.default_branch ?? 'main';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-built-'));
  try {
    const wc = new WorkingCopy(dir, { egress: egressPolicy(app.config) });
    await wc.init({
      branch,
      remoteUrl: remote,
      author: SCRATCH_AUTHOR,
      readme: '',
      adopt: { creds: credentialsFor(app, configs, remote) },
    });
    return await wc.filesAt(commit);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Whether the claimed source vouches for the zip's files: null when it does, else why not. */
async function provenanceFailure(
  app: BuiltDeps,
  files: Map<string, string>,
  remote: string,
  commit: string,
  host: string,
): Promise<string | null> {
  const registry = await app.stores.cleanRelease.registry();
  if (!isTrusted(host, registry.hosts))
    return `the claimed source ${remote} is outside the trusted registry (host ${host}); it was not fetched`;
  let held: Map<string, string>;
  try {
    held = await filesAtRemote(app, remote, commit);
  } catch (err) {
    return `commit ${commit} of ${remote} cannot be read: ${err instanceof Error ? err.message : String(err)}`;
  }
  const zip = portableDigest(files);
  const source = portableDigest(held);
  return zip === source
    ? null
    : `the zip's content (portable sha256 ${zip}) is not what commit ${commit} of ${remote} holds (portable sha256 ${source})`;
}

export async function readBuilt(app: BuiltDeps, input: BuiltArtifactInput, index: number): Promise<ReadBuilt> {
  const parsed = unpack(app, input, index);
  const { remote, commit } = input.source;
  const host = new URL(remote).hostname.toLowerCase();
  const failure = await provenanceFailure(app, parsed.files, remote, commit, host);
  return {
    files: parsed.files,
    uuid: parsed.dashboardUuid,
    title: parsed.title,
    host: { host, where: `claimed git remote ${remote} of a built artifact` },
    source: { kind: 'built', remote, commit, sha256: input.sha256, verified: failure === null, reason: failure },
  };
}
