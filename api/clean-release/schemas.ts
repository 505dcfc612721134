import { z } from 'zod';
import { pairSettingsView } from '../env-rules/frozen-view.ts';
import { CANDIDATE_STATES, POLICY_RULES } from '../../contracts/clean-release.ts';
import type { ArtifactRow, CandidateRow, DecisionRow, ManifestRow, PublicationRow, ReportRow } from '../../db/clean-release/store.ts';
import { pageEnvelope, pagination, SUPERSET_ID_MAX } from '../http/schemas.ts';
import { verificationOption } from '../http/verification.ts';

const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, 'must be a UUID')
  .transform((s) => s.toLowerCase());

export const releaseSource = z.discriminatedUnion('kind', [
  z
    .object({
      kind: z.literal('git'),
      dashboard_uuid: uuid,
      commit: z
        .string()
        .regex(/^[0-9a-f]{40}$/i, 'must be a full 40-character commit id')
        .transform((s) => s.toLowerCase()),
    })
    .strict(),
  z.object({ kind: z.literal('backup'), backup_id: uuid }).strict(),
]);

const dbMapping = z
  .object({
    database_uuid: uuid.optional(),
    database_name: z.string().trim().min(1).max(250).optional(),
    target_database_id: z.number().int().positive().max(SUPERSET_ID_MAX),
  })
  .strict()
  .refine((m) => m.database_uuid || m.database_name, 'name the source database by database_uuid or database_name');

export const candidateBody = z
  .object({
    name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(200),
    target_env_id: z.string({ error: 'target_env_id is required' }).trim().min(1).max(200),
    sources: z.array(releaseSource).min(1, 'a candidate needs at least one source').max(200),
    db_mappings: z.array(dbMapping).max(200).default([]),
  })
  .strict();

const builtArtifact = z
  .object({
    zip_base64: z
      .base64('must be base64')
      .min(1)
      .max(2_700_000)
      .describe("the dashboard's export zip (Superset's `dashboard/export`), base64"),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/i, 'must be a sha256 in hex (64 characters)')
      .transform((s) => s.toLowerCase())
      .describe("the zip's sha256, as the job that built it computed it"),
    source: z
      .object({
        remote: z
          .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
          .max(2000)
          .refine((u) => {
            const p = new URL(u);
            return !p.username && !p.password;
          }, 'a remote URL must not carry credentials')
          .describe('the git remote the artifact claims to come from'),
        commit: z
          .string()
          .regex(/^[0-9a-f]{40}$/i, 'must be a full 40-character commit id')
          .transform((s) => s.toLowerCase()),
      })
      .strict()
      .describe('where the artifact claims to come from: fetched and compared'),
  })
  .strict();

export const artifactsBody = z
  .object({
    sources: z
      .array(releaseSource)
      .min(1)
      .max(200)
      .optional()
      .describe('re-pin the candidate: these sources instead of the ones it was registered with'),
    built: z
      .array(builtArtifact)
      .min(1)
      .max(50)
      .optional()
      .describe(
        'artifacts built elsewhere (a CI job): one export zip per dashboard with its sha256 and claimed git source; instead of reading the pinned sources',
      ),
  })
  .strict()
  .refine((b) => !(b.sources && b.built), 'send either sources or built, not both');

export const decisionBody = z
  .object({
    comment: z.string().trim().max(2000).optional(),
    verification: verificationOption.describe(`A publish's verification (other decisions ignore it): ${verificationOption.description}`),
  })
  .strict();
export const legacyCheckBody = z.object({ candidate_id: uuid }).strict();
export const candidateParams = z.object({ candidate_id: z.string().max(100) });
export const checkParams = z.object({ check_id: z.string().max(100) });
export const reportParams = z.object({ report_id: z.string().max(100) });
export const candidateListQuery = z.object(pagination);

const host = z
  .string()
  .trim()
  .toLowerCase()
  .min(1)
  .max(253)
  .regex(/^(\*\.)?[a-z0-9_-]+(\.[a-z0-9_-]+)*\.?$|^[0-9a-f:.]+$/, 'must be a host name (optionally `*.` and a domain) or an IP address');
export const registryBody = z
  .object({
    hosts: z
      .array(host)
      .max(1000)
      .transform((h) => [...new Set(h)].sort()),
  })
  .strict();
const policyRule = z
  .object({ rule: z.enum(POLICY_RULES), mode: z.enum(['enforce', 'warn']), env_id: z.string().trim().min(1).max(200).optional() })
  .strict()
  .refine((r) => r.rule !== 'verified_in_staging' || r.env_id, 'verified_in_staging needs env_id (the staging environment)');
export const policyBody = z
  .object({ rules: z.array(policyRule).max(POLICY_RULES.length) })
  .strict()
  .refine((p) => new Set(p.rules.map((r) => r.rule)).size === p.rules.length, 'each rule at most once');

const violation = z.object({
  rule: z.string(),
  mode: z.enum(['enforce', 'warn']),
  blocking: z.boolean(),
  artifact: z.string().nullable(),
  host: z.string().optional(),
  where: z.string().optional(),
  message: z.string(),
});
const checkOutcome = z.object({
  check: z.string(),
  status: z.enum(['passed', 'failed', 'warned']),
  detail: z.string(),
  violations: z.array(violation),
});
const hostOccurrence = z.object({ host: z.string(), role: z.enum(['source', 'database', 'url']), where: z.string() });

export const artifactView = z.object({
  dashboard_uuid: z.string(),
  title: z.string().nullable(),
  source: z.record(z.string(), z.unknown()),
  sha256: z.string(),
  portable_sha256: z.string(),
  files: z.number().int(),
  hosts: z.array(hostOccurrence),
});
export const toArtifactView = (a: ArtifactRow) => ({
  dashboard_uuid: a.dashboard_uuid,
  title: a.title,
  source: a.source as Record<string, unknown>,
  sha256: a.sha256,
  portable_sha256: a.portable_sha256,
  files: Object.keys(a.files).length,
  hosts: a.hosts,
});

export const manifestView = z.object({
  id: z.string(),
  candidate_id: z.string(),
  digest: z.string(),
  body: z
    .object({
      pairs: z
        .array(pairSettingsView)
        .optional()
        .describe(
          'the rules and saved database mappings of each environment pair the artifacts come from, frozen when the manifest was built and covered by its digest: a publish applies these, and refuses an artifact (step `rules`, nothing imported) when the stored ones changed since; absent in manifests built before they were frozen (a publish of one is refused alike: build the manifest again)',
        ),
    })
    .catchall(z.unknown())
    .describe(
      "the manifest's content (its `digest` is the sha256 of its canonical JSON); each artifact's `hosts` are those of its files as they will be written, under the frozen rules",
    ),
  created_at: z.string(),
});
export const toManifestView = (m: ManifestRow) => ({
  id: m.id,
  candidate_id: m.candidate_id,
  digest: m.digest,
  body: m.body as unknown as Record<string, unknown>,
  created_at: m.created_at.toISOString(),
});

const decisionView = z.object({
  action: z.string(),
  by: z.string().nullable(),
  comment: z.string().nullable(),
  state_after: z.string(),
  task_id: z.string().nullable(),
  at: z.string(),
});
const publicationView = z.object({
  dashboard_uuid: z.string(),
  env_id: z.string(),
  target_dashboard_id: z.number().nullable(),
  backup_id: z.string().nullable(),
  existed: z.boolean(),
});

export const candidateView = z.object({
  id: z.string(),
  name: z.string(),
  target_env_id: z.string(),
  state: z.enum(CANDIDATE_STATES),
  sources: z.array(z.record(z.string(), z.unknown())),
  db_mappings: z.array(z.record(z.string(), z.unknown())),
  created_by: z.string().nullable(),
  manifest_id: z.string().nullable(),
  report_id: z.string().nullable(),
  workflow_id: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export const candidateDetail = candidateView.extend({
  artifacts: z.array(artifactView),
  decisions: z.array(decisionView),
  publications: z.array(publicationView),
});
export const candidateList = pageEnvelope(candidateView);

export const toCandidateView = (c: CandidateRow) => ({
  id: c.id,
  name: c.name,
  target_env_id: c.target_env_id,
  state: c.state,
  sources: c.sources as unknown as Array<Record<string, unknown>>,
  db_mappings: c.db_mappings as unknown as Array<Record<string, unknown>>,
  created_by: c.created_by_username,
  manifest_id: c.manifest_id,
  report_id: c.report_id,
  workflow_id: `release-${c.id}`,
  created_at: c.created_at.toISOString(),
  updated_at: c.updated_at.toISOString(),
});
export const toCandidateDetail = (c: CandidateRow, artifacts: ArtifactRow[], decisions: DecisionRow[], publications: PublicationRow[]) => ({
  ...toCandidateView(c),
  artifacts: artifacts.map(toArtifactView),
  decisions: decisions.map((d) => ({
    action: d.action,
    by: d.by_username,
    comment: d.comment,
    state_after: d.state_after,
    task_id: d.task_id,
    at: d.at.toISOString(),
  })),
  publications: publications.map((p) => ({
    dashboard_uuid: p.dashboard_uuid,
    env_id: p.env_id,
    target_dashboard_id: p.target_dashboard_id,
    backup_id: p.backup_id,
    existed: p.existed,
  })),
});

export const artifactsImported = z.object({
  status: z.literal('imported'),
  candidate_id: z.string(),
  state: z.string(),
  artifacts: z.array(artifactView),
});
export const prepareView = z.object({
  candidate_id: z.string(),
  status: z.enum(['prepared', 'blocked']),
  manifest_id: z.string(),
  violations: z.array(violation),
});
export const checkStarted = z.object({
  check_id: z.string(),
  report_id: z.string(),
  candidate_id: z.string(),
  task_id: z.string(),
  status: z.literal('running'),
});
export const checkView = z.object({
  check_id: z.string(),
  report_id: z.string(),
  candidate_id: z.string(),
  manifest_id: z.string(),
  task_id: z.string().nullable(),
  task_status: z.string().nullable(),
  status: z.enum(['running', 'passed', 'failed']),
  checks: z.array(checkOutcome),
  created_at: z.string(),
  finished_at: z.string().nullable(),
});
export const reportView = checkView;
export const toReportView = (r: ReportRow, taskStatus: string | null) => ({
  check_id: r.id,
  report_id: r.id,
  candidate_id: r.candidate_id,
  manifest_id: r.manifest_id,
  task_id: r.task_id,
  task_status: taskStatus,
  status: r.status,
  checks: r.checks,
  created_at: r.created_at.toISOString(),
  finished_at: r.finished_at?.toISOString() ?? null,
});
export const decisionOutcome = z.object({
  candidate_id: z.string(),
  decision: z.enum(['approve', 'reject', 'publish', 'revoke']),
  state: z.enum(CANDIDATE_STATES),
  by: z.string().nullable(),
  at: z.string(),
  comment: z.string().nullable(),
  task_id: z.string().optional(),
});
export const registryView = z.object({ hosts: z.array(z.string()) });
export const policyView = z.object({
  rules: z.array(z.object({ rule: z.string(), mode: z.enum(['enforce', 'warn']), env_id: z.string().optional() })),
});
