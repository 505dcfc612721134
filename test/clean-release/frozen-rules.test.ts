import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { buildPositions, updateDashboard, type SupersetClient } from '../support/superset/fixtures.ts';
import type { SourceFixture } from '../dashboard-migration/support.ts';
import { buildSource, client, dashboardTitle, registerEnvironment, targetDatabase, userWith, waitTask } from '../git/support.ts';

// A release's rules and saved mappings are frozen in its manifest, against real Superset (a → b),
// PostgreSQL and Temporal: the trusted-hosts check reads the files as they will be written (a URL
// rule pointing at an untrusted host blocks the candidate), and a rule of the pair added after
// the approval makes the publish stale: refused at step `rules`, b unchanged.
const on = inject('supersets') !== null;
const P = `fr${Date.now().toString(36)}`;
const TRUSTED = `https://bi-${P}.corp.example`;
const UNTRUSTED = `${P}.attacker.example`;
const V2 = '/api/v2/clean-release';
let h: Harness;
let a: SupersetClient;
let b: SupersetClient;
let envA: string;
let envB: string;
let src: SourceFixture;
let backups: string[];
let author: string;
let manager: string;

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);
const admin = (m: string, p: string, o: Record<string, unknown> = {}) => as(h.adminToken)(m, p, o);

async function addRule(from: string, to: string): Promise<() => Promise<void>> {
  const r = await admin('POST', `/api/environments/${envA}/rules/${envB}`, { json: { kind: 'text', from, to } });
  expect(r.status, r.text).toBe(201);
  return async () => {
    expect((await admin('DELETE', `/api/environments/${envA}/rules/${envB}/${r.body.id}`)).status).toBe(204);
  };
}

/** A candidate of one backup, its artifacts imported and its manifest built. */
async function candidateOf(backupId: string, name: string) {
  const r = await as(author)('POST', `${V2}/candidates`, {
    json: { name: `${P} ${name}`, target_env_id: envB, sources: [{ kind: 'backup', backup_id: backupId }] },
  });
  expect(r.status, r.text).toBe(201);
  expect((await as(author)('POST', `${V2}/candidates/${r.body.id}/artifacts`, { json: {} })).status).toBe(200);
  const man = await as(author)('POST', `${V2}/candidates/${r.body.id}/manifest`);
  expect(man.status, man.text).toBe(201);
  return { id: r.body.id as string, manifest: man.body };
}

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, b] = await Promise.all([client('a'), client('b')]);
  const dir = path.join(inject('runDir'), P);
  src = await buildSource(a, P, dir, { dashboards: 2 });
  // Dashboard 1 links to a trusted host in a markdown element.
  const d1 = src.dashboards[0]!;
  const positions = buildPositions(
    d1.title,
    d1.chartIds.map((id) => ({ id })),
  ) as Record<string, any>;
  positions['MARKDOWN-notes'] = {
    type: 'MARKDOWN',
    id: 'MARKDOWN-notes',
    children: [],
    parents: ['ROOT_ID', 'GRID_ID', 'ROW-1'],
    meta: { width: 4, height: 50, code: `See [the board](${TRUSTED}/board)` },
  };
  positions['ROW-1'].children.push('MARKDOWN-notes');
  await updateDashboard(a, d1.id, { json_metadata: JSON.stringify({ positions }) });
  const db = await targetDatabase(b, P, dir);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envB = await registerEnvironment(h, 'b', `${P}-b`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envB}`, {
    json: { mappings: [{ source_database_id: src.database.id, target_database_id: db.id }] },
  });
  expect(m.status, m.text).toBe(200);
  author = await userWith(h, `${P}-rm1`, ['ReleaseManager']);
  manager = await userWith(h, `${P}-rm2`, ['ReleaseManager']);
  const bk = await admin('POST', '/api/dashboards/backup', { json: { env_id: envA, dashboard_ids: src.dashboards.map((d) => d.id) } });
  const bt = await waitTask(h, bk.body.task_id);
  expect(bt.status, JSON.stringify(bt.result)).toBe('SUCCEEDED');
  backups = src.dashboards.map((d) => bt.result.items.find((i: { id: number }) => i.id === d.id).backup_id);
  const hosts = [new URL((await admin('GET', `/api/environments/${envA}`)).body.base_url).hostname, new URL(TRUSTED).hostname];
  expect((await admin('PUT', `${V2}/registry`, { json: { hosts } })).status).toBe(200);
}, 300_000);
afterAll(async () => h?.close());

describe.skipIf(!on)('a release under frozen rules', () => {
  it('the trusted-hosts check reads the files as they will be written: a URL rule to an untrusted host blocks', async () => {
    const removeRule = await addRule(TRUSTED, `https://${UNTRUSTED}`);
    try {
      const { id, manifest } = await candidateOf(backups[0]!, 'rewritten');
      expect(manifest.body.pairs).toEqual([
        expect.objectContaining({ source_env_id: envA, target_env_id: envB, rules: [expect.objectContaining({ from: TRUSTED })] }),
      ]);
      expect(manifest.body.hosts).toContain(UNTRUSTED);
      const p = await as(author)('POST', `${V2}/candidates/${id}/prepare`);
      expect(p.status, p.text).toBe(200);
      expect(p.body.status).toBe('blocked');
      expect(p.body.violations).toContainEqual(expect.objectContaining({ rule: 'trusted_sources', host: UNTRUSTED, blocking: true }));
    } finally {
      await removeRule();
    }
  });

  it('a rule added after the approval makes the publish stale: refused with a next action, b unchanged', async () => {
    const { id, manifest } = await candidateOf(backups[1]!, 'approved');
    expect(manifest.body.pairs[0]).toMatchObject({ source_env_id: envA, rules: [], digest: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect((await as(author)('POST', `${V2}/candidates/${id}/prepare`)).body.status).toBe('prepared');
    const s = await as(author)('POST', `${V2}/candidates/${id}/checks`);
    expect(s.status, s.text).toBe(202);
    await waitTask(h, s.body.task_id);
    const c = await as(author)('GET', `${V2}/checks/${s.body.check_id}`);
    expect(c.body.status, JSON.stringify(c.body.checks)).toBe('passed');
    const ok = await as(manager)('POST', `${V2}/candidates/${id}/approve`, { json: {} });
    expect(ok.status, ok.text).toBe(200);

    const removeRule = await addRule(`${P} sales`, `${P} attacked`);
    try {
      const pub = await as(manager)('POST', `${V2}/candidates/${id}/publish`, { json: {} });
      expect(pub.status, pub.text).toBe(200);
      const task = await waitTask(h, pub.body.task_id);
      const item = task.result.items[0];
      expect(item).toMatchObject({ status: 'failed', outcome: 'failed', step: 'rules' });
      expect(item.error).toContain('stale');
      expect(item.next_actions[0]).toMatchObject({ action: 'rebuild_manifest' });
      expect(await dashboardTitle(b, src.dashboards[1]!.uuid!)).toBeNull();
    } finally {
      await removeRule();
    }
  });
});
