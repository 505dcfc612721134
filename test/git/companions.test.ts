import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { client, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';
import { buildCompanionSource, companionNames, get, kind, named } from './companion-fixture.ts';
import { setIdentity } from './support.ts';

/**
 * A dashboard's companions in its repository and deployed from it, through the API and a real
 * worker against real Superset a (6.1.0, the source) and d (6.1.0, PostgreSQL metadata): sync
 * writes one YAML per companion (owners, a role, a tag, a report, an annotation layer, a CSS
 * template), ids replaced by names and uuids; a second sync changes nothing; a changed report is
 * one hunk; a deploy applies them into d (a strict role first stops it), a rerun changes nothing,
 * and a commit without companion files deploys saying there was nothing to apply.
 */
const enabled = inject('supersets') !== null;
const P = `gc${Date.now().toString(36)}`;

let h: Harness;
let a: SupersetClient;
let d: SupersetClient;
let envA: string;
let envD: string;
let dash: number;
let rowsUuid: string;
let reportId: number;
const { viewers, layerName, templateName, weekly, tagName } = companionNames(P);
const css = `.${P}-header { color: #654321; }`;
const commits = {} as Record<'bare' | 'first' | 'changed', string>;

const admin = (m: string, p: string, o: Record<string, unknown> = {}) => h.request(m, p, { ...o, token: h.adminToken });
const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;

async function buildSource(dir: string): Promise<void> {
  const src = await buildCompanionSource(a, d, P, dir, { css });
  ({ dash, rowsUuid, reportId } = src);
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envD = await registerEnvironment(h, 'd', `${P}-d`);
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envD}`, {
    json: { mappings: [{ source_database_id: src.sourceDb, target_database_id: src.targetDb }] },
  });
  expect(m.status, m.text).toBe(200);
}

beforeAll(async () => {
  if (!enabled) return;
  h = await createHarness({ worker: true });
  [a, d] = await Promise.all([client('a'), client('d')]);
  await buildSource(path.join(inject('runDir'), P));
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  const init = await admin('POST', G('init'), { json: { env_id: envA } });
  expect(init.status, init.text).toBe(200);
}, 300_000);
afterAll(async () => h?.close());

async function deploy(commit: string, extra: Record<string, unknown> = {}) {
  const r = await admin('POST', G('deploy'), { json: { env_id: envA, target_env_id: envD, commit, ...extra } });
  expect(r.status, r.text).toBe(202);
  const task = await waitTask(h, r.body.task_id, 300_000);
  return task.result.items[0];
}

describe.runIf(enabled)('companions in a dashboard repository', () => {
  it('sync writes one normalised YAML per companion; an unchanged dashboard syncs to the same bytes', async () => {
    const r = await admin('POST', G('sync'), { json: { env_id: envA } });
    expect(r.status, r.text).toBe(200);
    expect(r.body.companions).toMatchObject({ captured: true, kinds: { reports: 'captured', owners: 'captured' } });
    const companions = r.body.changed.filter((p: string) => p.startsWith('companions/'));
    expect(companions).toEqual(
      expect.arrayContaining([
        'companions/kinds.yaml',
        'companions/owners/admin.yaml',
        `companions/owners/${P}ann.yaml`,
        `companions/roles/${viewers}.yaml`,
        `companions/tags/${tagName}.yaml`,
        `companions/reports/${weekly}.yaml`,
        `companions/annotation_layers/${layerName}.yaml`,
        `companions/css_templates/${templateName}.yaml`,
      ]),
    );
    const again = await admin('POST', G('sync'), { json: { env_id: envA } });
    expect(again.body.changed).toEqual([]);

    // A commit of the bundle alone: what a repository made before companions were kept holds.
    const bundleOnly = r.body.changed.filter((p: string) => !p.startsWith('companions/'));
    const bare = await admin('POST', G('commit'), { json: { env_id: envA, message: 'bundle only', paths: bundleOnly } });
    expect(bare.status, bare.text).toBe(200);
    commits.bare = bare.body.commit;
    const first = await admin('POST', G('commit'), { json: { env_id: envA, message: 'with companions' } });
    expect(first.body.files).toEqual(expect.arrayContaining(companions));
    commits.first = first.body.commit;
  }, 300_000);

  it('holds names and uuids, not ids; a changed report is one readable hunk', async () => {
    const diff0 = await admin('GET', `${G('diff')}?env_id=${envA}&from=${commits.bare}&to=${commits.first}`);
    const report = diff0.body.files.find((f: any) => f.path === `companions/reports/${weekly}.yaml`).patch as string;
    expect(report).toContain('+dashboard: true');
    expect(report).toContain(`+    username: ${P}ann`);
    expect(report).toContain('team@example.com');
    expect(report).not.toMatch(/^\+\s*(id|dashboard_id|chart_id|owners?_id):/m);
    const layer = diff0.body.files.find((f: any) => f.path === `companions/annotation_layers/${layerName}.yaml`).patch as string;
    expect(layer).toContain('+    short_descr: v1 launch');
    const tag = diff0.body.files.find((f: any) => f.path === `companions/tags/${tagName}.yaml`).patch as string;
    expect(tag).toContain('+dashboard: true');

    await a.request('PUT', `/api/v1/report/${reportId}`, { json: { crontab: '0 10 * * 1' } });
    const r = await admin('POST', G('sync'), { json: { env_id: envA } });
    expect(r.body.changed).toEqual([`companions/reports/${weekly}.yaml`]);
    const diff = await admin('GET', `${G('diff')}?env_id=${envA}`);
    const patch: string = diff.body.files[0].patch;
    expect(patch.match(/^@@/gm)).toHaveLength(1);
    expect(patch).toContain('-crontab: 0 9 * * 1');
    expect(patch).toContain('+crontab: 0 10 * * 1');
    commits.changed = (await admin('POST', G('commit'), { json: { env_id: envA, message: 'report at ten' } })).body.commit;
  }, 300_000);

  it('a commit without companion files deploys as before and says nothing was there to apply', async () => {
    const item = await deploy(commits.bare);
    expect(item.status, item.error).toBe('deployed');
    expect(item.companions).toEqual([]);
    expect(item.companions_note).toMatch(/no companion files/);
  }, 600_000);

  it('deploy applies the companions: a strict kind that differs stops it first; by default they all arrive (the role too); a rerun changes nothing', async () => {
    const blocked = await deploy(commits.changed, { companions: { owners: 'strict' } });
    expect(blocked).toMatchObject({ status: 'failed', step: 'companions', code: 'companions_mismatch' });
    expect(blocked.next_actions.find((n: any) => n.action === 'retry_with_companions_copy').request.body).toMatchObject({
      companions: { owners: 'copy' },
      commit: commits.changed,
    });

    // The dashboard's role is in the target: under the default strict it arrives restricted to it.
    const item = await deploy(commits.changed);
    expect(item.status, JSON.stringify([item.error, item.companions])).toBe('deployed');
    expect(kind(item, 'reports').items).toEqual([expect.objectContaining({ name: weekly, action: 'create', done: true })]);
    const target = item.target_dashboard_id;
    const there = await get(d, `/api/v1/dashboard/${target}`);
    expect(there.owners.map((x: any) => x.id)).toContain(await userIdOf(d, `${P}ann`));
    expect(there.roles.map((x: any) => x.name)).toEqual([viewers]);
    expect(there.tags.map((x: any) => x.name)).toContain(tagName);
    const [report] = await named(d, '/api/v1/report/', 'name', weekly);
    const detail = await get(d, `/api/v1/report/${report.id}`);
    expect(detail).toMatchObject({ crontab: '0 10 * * 1', active: false, dashboard: { id: target } });
    const [layer] = await named(d, '/api/v1/annotation_layer/', 'name', layerName);
    expect((await get<any[]>(d, `/api/v1/annotation_layer/${layer.id}/annotation/`)).map((x: any) => x.short_descr)).toEqual(['v1 launch']);
    const charts = await get<any[]>(d, `/api/v1/dashboard/${target}/charts`);
    const rows = await Promise.all(charts.map((c) => get(d, `/api/v1/chart/${c.id}`)));
    const drawn = JSON.parse(rows.find((c: any) => c.uuid === rowsUuid).params).annotation_layers;
    expect(drawn).toEqual([expect.objectContaining({ sourceType: 'NATIVE', value: layer.id })]);
    expect(await named(d, '/api/v1/css_template/', 'template_name', templateName)).toHaveLength(1);

    const rerun = await deploy(commits.changed, { companions: { roles: 'copy' } });
    expect(rerun.status).toBe('deployed');
    // A deploy imports every time, and Superset's chart import drops the chart's native annotation
    // entries: they are put back after it (the only write), so the chart still draws the layer.
    const changed = rerun.companions.flatMap((k: any) =>
      k.items.filter((i: any) => i.done || i.action === 'create' || i.action === 'update').map((i: any) => `${k.kind}:${i.name}`),
    );
    expect(
      changed.every((c: string) => c.startsWith('annotation_layers:')),
      changed.join(', '),
    ).toBe(true);
    const again = await Promise.all(
      (await get<any[]>(d, `/api/v1/dashboard/${target}/charts`)).map((c) => get(d, `/api/v1/chart/${c.id}`)),
    );
    expect(JSON.parse(again.find((c: any) => c.uuid === rowsUuid).params).annotation_layers).toEqual([
      expect.objectContaining({ sourceType: 'NATIVE', value: layer.id }),
    ]);
  }, 900_000);
});
