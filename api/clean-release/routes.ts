import type { Context } from 'koa';
import type { ReleaseAction } from '../../contracts/clean-release.ts';
import { NotFoundError } from '../../lib/errors.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import {
  artifactsBody,
  artifactsImported,
  candidateBody,
  candidateDetail,
  candidateList,
  candidateListQuery,
  candidateParams,
  candidateView,
  checkParams,
  checkStarted,
  checkView,
  decisionBody,
  decisionOutcome,
  legacyCheckBody,
  manifestView,
  policyBody,
  policyView,
  prepareView,
  registryBody,
  registryView,
  reportParams,
  reportView,
  toArtifactView,
  toCandidateDetail,
  toCandidateView,
  toManifestView,
} from './schemas.ts';

const V2 = '/api/v2/clean-release';
const LEGACY = '/api/clean-release';
const TAG = 'Clean release';

/** The legacy paths answer like v2 (the path's ids percent-encoded: a header carries no raw non-ASCII), marked deprecated with a link to their successor (RFC 9745, RFC 8288). */
function deprecated(ctx: Context, successor: string) {
  ctx.set('Deprecation', 'true');
  ctx.set('Link', `<${successor}>; rel="successor-version"`);
}

const DECISIONS: Record<ReleaseAction, { summary: string; description: string }> = {
  approve: {
    summary: 'Approve a checked candidate',
    description:
      'Approves a `checked` candidate whose latest report passed, by a person who is not one of its requesters, as a Temporal update of its release workflow. Details: docs/clean-release.md#post-apiv2clean-releasecandidatescandidate_idapprove.',
  },
  reject: {
    summary: 'Reject a candidate',
    description:
      'Ends the candidate (`rejected`) from any state before publishing; answers the decision payload (who, when, comment). Needs `clean_release:APPROVE`.',
  },
  publish: {
    summary: 'Publish an approved candidate (starts a task)',
    description:
      'Moves the candidate to `publishing` and starts a `release_publish` task that imports the exact files into the target and verifies them; it ends `published` or `publish_failed`. Details: docs/clean-release.md#post-apiv2clean-releasecandidatescandidate_idpublish.',
  },
  revoke: {
    summary: 'Revoke a published candidate (starts a task)',
    description:
      'Puts back what the publish replaced: each dashboard is restored from the backup taken before it was published over, and a dashboard the publish created is deleted. Starts a `release_publish` task in revoke mode; the candidate ends `revoked`.',
  },
};

export function cleanReleaseRoutes(app: AppContext): AnyRoute[] {
  const svc = app.cleanRelease;
  const store = svc.store;

  const prepare = async (candidateId: string) => {
    const { candidate, violations } = await svc.prepare(candidateId);
    return {
      candidate_id: candidate.id,
      status: candidate.state as 'prepared' | 'blocked',
      manifest_id: candidate.manifest_id!,
      violations,
    };
  };
  const checkStatus = async (checkId: string) => svc.check(checkId);

  const prepareRoute = (base: string) =>
    defineRoute({
      method: 'post',
      path: `${base}/candidates/:candidate_id/prepare`,
      tag: TAG,
      summary: base === V2 ? 'Prepare a candidate against the trusted registry' : 'Prepare a candidate (deprecated: use v2)',
      description:
        '`prepared` with the manifest id when every host the artifacts came from or reference is in the trusted registry; otherwise `blocked`, with one violation per untrusted host. Details: docs/clean-release.md#post-apiv2clean-releasecandidatescandidate_idprepare.',
      access: { permission: 'clean_release:WRITE' },
      params: candidateParams,
      responses: {
        200: { description: 'Prepared or blocked', schema: prepareView },
        404: { description: 'Unknown candidate' },
        409: { description: '`no_manifest` or `invalid_state`' },
      },
      async handler(ctx, { params }) {
        if (base === LEGACY) deprecated(ctx, `${V2}/candidates/${encodeURIComponent(params.candidate_id)}/prepare`);
        return prepare(params.candidate_id);
      },
    });

  const startCheckRoute = (legacy: boolean) =>
    defineRoute({
      method: 'post',
      path: legacy ? `${LEGACY}/checks` : `${V2}/candidates/:candidate_id/checks`,
      tag: TAG,
      summary: legacy ? "Start a candidate's checks (deprecated: use v2)" : "Start a candidate's checks (a `release_check` task)",
      description:
        "Runs the candidate's checks as a Temporal workflow (digests, hosts and policy rules) and persists the report; passed moves the candidate to `checked`, failed to `check_failed`. Details: docs/clean-release.md#post-apiv2clean-releasecandidatescandidate_idchecks.",
      access: { permission: 'clean_release:WRITE' },
      ...(legacy ? { body: legacyCheckBody } : { params: candidateParams }),
      responses: {
        202: { description: 'Check started', schema: checkStarted },
        404: { description: 'Unknown candidate' },
        409: { description: '`no_manifest` or `invalid_state` (prepare first)' },
      },
      async handler(ctx, input) {
        const candidateId = legacy
          ? (input.body as { candidate_id: string }).candidate_id
          : (input.params as { candidate_id: string }).candidate_id;
        if (legacy) deprecated(ctx, `${V2}/candidates/${encodeURIComponent(candidateId)}/checks`);
        const started = await svc.startCheck(candidateId, input.principal);
        ctx.status = 202;
        ctx.set('Location', `${V2}/checks/${started.check_id}`);
        ctx.body = started;
      },
    });

  const checkRoute = (base: string) =>
    defineRoute({
      method: 'get',
      path: `${base}/checks/:check_id`,
      tag: TAG,
      summary: base === V2 ? "A check's status" : "A check's status (deprecated: use v2)",
      description: "The same run the start answered: `running` until its task ends, then `passed` or `failed` with every check's outcome.",
      access: { permission: 'clean_release:READ' },
      params: checkParams,
      responses: { 200: { description: 'The check', schema: checkView }, 404: { description: 'Unknown check' } },
      async handler(ctx, { params }) {
        if (base === LEGACY) deprecated(ctx, `${V2}/checks/${encodeURIComponent(params.check_id)}`);
        return checkStatus(params.check_id);
      },
    });

  const decisionRoute = (action: ReleaseAction) =>
    defineRoute({
      method: 'post',
      path: `${V2}/candidates/:candidate_id/${action}`,
      tag: TAG,
      summary: DECISIONS[action].summary,
      description: DECISIONS[action].description,
      access: { permission: 'clean_release:APPROVE' },
      params: candidateParams,
      body: decisionBody,
      responses: {
        200: { description: 'The decision', schema: decisionOutcome },
        403: { description: 'Missing `clean_release:APPROVE`, or `self_approval`' },
        404: { description: 'Unknown candidate' },
        409: { description: '`invalid_state` (names the state) or `no_passed_report`' },
      },
      handler: (_ctx, { params, body, principal }) => svc.decide(params.candidate_id, action, principal, body.comment, body.verification),
    });

  return [
    defineRoute({
      method: 'get',
      path: `${V2}/candidates`,
      tag: TAG,
      summary: 'List release candidates',
      access: { permission: 'clean_release:READ' },
      query: candidateListQuery,
      responses: { 200: { description: 'A page of candidates, newest first', schema: candidateList } },
      async handler(_ctx, { query }) {
        const { rows, total } = await store.listCandidates(query.page, query.page_size);
        return {
          items: rows.map(toCandidateView),
          total,
          page: query.page,
          page_size: query.page_size,
          has_next: query.page * query.page_size < total,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${V2}/candidates`,
      tag: TAG,
      summary: 'Register a release candidate',
      description:
        'Registers a named set of dashboards at pinned sources (git commits or backups), bound for a target environment; it starts `draft` with its release workflow. Details: docs/clean-release.md#post-apiv2clean-releasecandidates.',
      access: { permission: 'clean_release:WRITE' },
      body: candidateBody,
      responses: {
        201: { description: 'Registered (draft)', schema: candidateView },
        400: { description: 'Invalid body' },
        404: { description: 'Unknown target environment' },
      },
      async handler(ctx, { body, principal }) {
        const c = await svc.register(body, principal);
        ctx.status = 201;
        ctx.set('Location', `${V2}/candidates/${c.id}`);
        ctx.body = toCandidateView(c);
      },
    }),
    defineRoute({
      method: 'get',
      path: `${V2}/candidates/:candidate_id`,
      tag: TAG,
      summary: 'A release candidate with its artifacts, decisions and publications',
      access: { permission: 'clean_release:READ' },
      params: candidateParams,
      responses: { 200: { description: 'The candidate', schema: candidateDetail }, 404: { description: 'Unknown candidate' } },
      async handler(_ctx, { params }) {
        const c = await store.getCandidate(params.candidate_id);
        const [artifacts, decisions, publications] = await Promise.all([
          store.artifacts(c.id),
          store.decisions(c.id),
          store.publications(c.id),
        ]);
        return toCandidateDetail(c, artifacts, decisions, publications);
      },
    }),
    defineRoute({
      method: 'post',
      path: `${V2}/candidates/:candidate_id/artifacts`,
      tag: TAG,
      summary: "Import the candidate's artifacts from its pinned sources",
      description:
        'Reads each pinned source, or takes artifacts built elsewhere (`built`), into normalised files with their digests and every host they reference; the candidate goes back to `draft`. Details: docs/clean-release.md#post-apiv2clean-releasecandidatescandidate_idartifacts.',
      access: { permission: 'clean_release:WRITE' },
      params: candidateParams,
      body: artifactsBody,
      responses: {
        200: { description: 'Imported', schema: artifactsImported },
        400: {
          description:
            'Invalid body, `source_unreadable`, or `artifact_digest_mismatch` (a built zip whose bytes do not digest to its `sha256`)',
        },
        404: { description: 'Unknown candidate, repository or backup' },
        409: { description: '`invalid_state`' },
      },
      async handler(_ctx, { params, body, principal }) {
        const artifacts = await svc.importArtifacts(params.candidate_id, principal, body.sources, body.built);
        const c = await store.getCandidate(params.candidate_id);
        return { status: 'imported' as const, candidate_id: c.id, state: c.state, artifacts: artifacts.map(toArtifactView) };
      },
    }),
    defineRoute({
      method: 'post',
      path: `${V2}/candidates/:candidate_id/manifest`,
      tag: TAG,
      summary: "Build the candidate's manifest",
      description:
        "Lists every artifact's digests and hosts; the manifest itself is digested (sha256 of its canonical JSON). Checks and publish hold the artifacts to it. 409 `no_artifacts` before artifacts are imported.",
      access: { permission: 'clean_release:WRITE' },
      params: candidateParams,
      responses: {
        201: { description: 'The manifest', schema: manifestView },
        404: { description: 'Unknown candidate' },
        409: { description: '`no_artifacts` or `invalid_state`' },
      },
      async handler(ctx, { params }) {
        ctx.status = 201;
        ctx.body = toManifestView(await svc.buildManifest(params.candidate_id));
      },
    }),
    prepareRoute(V2),
    startCheckRoute(false),
    checkRoute(V2),
    defineRoute({
      method: 'get',
      path: `${V2}/reports/:report_id`,
      tag: TAG,
      summary: 'A persisted check report',
      access: { permission: 'clean_release:READ' },
      params: reportParams,
      responses: { 200: { description: 'The report', schema: reportView }, 404: { description: 'Unknown report' } },
      async handler(_ctx, { params }) {
        const r = await store.findReport(params.report_id);
        if (!r) throw new NotFoundError('Report', params.report_id);
        return checkStatus(r.id);
      },
    }),
    decisionRoute('approve'),
    decisionRoute('reject'),
    decisionRoute('publish'),
    decisionRoute('revoke'),
    defineRoute({
      method: 'get',
      path: `${V2}/registry`,
      tag: TAG,
      summary: 'The trusted registry',
      access: { permission: 'clean_release:READ' },
      responses: { 200: { description: 'Trusted hosts', schema: registryView } },
      handler: () => store.registry(),
    }),
    defineRoute({
      method: 'put',
      path: `${V2}/registry`,
      tag: TAG,
      summary: 'Replace the trusted registry (admin)',
      description:
        'Host names, `*.example.com` for any host below a domain, or IP addresses. Prepare and every later check read it as it is then.',
      access: 'admin',
      body: registryBody,
      responses: { 200: { description: 'The registry', schema: registryView }, 400: { description: 'Invalid host' } },
      async handler(_ctx, { body, principal }) {
        await store.putSetting('registry', body, principal.username);
        return store.registry();
      },
    }),
    defineRoute({
      method: 'get',
      path: `${V2}/policy`,
      tag: TAG,
      summary: 'The release policy',
      access: { permission: 'clean_release:READ' },
      responses: { 200: { description: 'Rules, each `enforce` or `warn`', schema: policyView } },
      handler: () => store.policy(),
    }),
    defineRoute({
      method: 'put',
      path: `${V2}/policy`,
      tag: TAG,
      summary: 'Replace the release policy (admin)',
      description:
        "Replaces the release policy's rules (trusted hosts, staging verification, accepted LLM text, dry-run migration), each `enforce` or `warn`. Details: docs/clean-release.md#put-apiv2clean-releasepolicy.",
      access: 'admin',
      body: policyBody,
      responses: { 200: { description: 'The policy', schema: policyView }, 400: { description: 'Invalid rule' } },
      async handler(_ctx, { body, principal }) {
        await store.putSetting('policy', body, principal.username);
        return store.policy();
      },
    }),
    prepareRoute(LEGACY),
    startCheckRoute(true),
    checkRoute(LEGACY),
  ];
}
