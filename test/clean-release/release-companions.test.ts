import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createHarness, type Harness } from '../support/harness.ts';
import { userIdOf, type SupersetClient } from '../support/superset/fixtures.ts';
import { buildCompanionSource, companionNames, get, kind, named } from '../git/companion-fixture.ts';
import { client, enabled, gitea, registerEnvironment, setIdentity, userWith, waitTask } from '../git/support.ts';

/**
 * A clean release's publish applies the companion files of the commit it was pinned at, against
 * real Superset a (6.1.0, the source) and d (6.1.0, PostgreSQL metadata) and the real Gitea: a
 * dashboard with two owners, a role, a tag, a weekly report, an annotation layer a chart draws, a
 * CSS template and a theme is synced and committed; a candidate from that commit is checked,
 * approved by a second release manager and published into d, where each companion is read back
 * from Superset; the item lists them per kind; a second release of the same commit changes
 * nothing in d.
 */
const on = enabled();
const P = `rk${Date.now().toString(36)}`;
const V2 = '/api/v2/clean-release';
const { viewers, layerName, templateName, themeName, weekly, tagName } = companionNames(P);
const css = `.${P}-header { color: #123456; }`;

let h: Harness;
let a: SupersetClient;
let d: SupersetClient;
let envA: string;
let envD: string;
let dash: number;
let dashUuid: string;
let rowsUuid: string;
let themeUuid: string;
let commit: string;
let author: string; // the release manager who registers
let manager: string; // another release manager, who approves and publishes
// The first publish, made once by whichever test needs it first: the second-release test run
// alone (`-t`) makes it itself instead of reading what the publish test left.
let firstRun: Promise<any> | undefined;
const firstPublish = () => (firstRun ??= release(`${P} first`).then((r) => r.item));

// The harness's own request-as-this-person (h is made in beforeAll, so it is read at call time).
const as = (token: string) => h.as(token);
const admin = (m: string, p: string, o: Record<string, unknown> = {}) => as(h.adminToken)(m, p, o);
const G = (op: string) => `/api/git/dashboards/${dash}/${op}`;

/** The source dashboard in a and its companions (test/git/companion-fixture.ts); d's layers get other ids. */
async function buildSource(dir: string): Promise<number> {
  const src = await buildCompanionSource(a, d, P, dir, { css, theme: true, decoyLayers: true });
  ({ dash, dashUuid, rowsUuid } = src);
  themeUuid = src.themeUuid!;
  return src.targetDb;
}

beforeAll(async () => {
  if (!on) return;
  h = await createHarness({ worker: true });
  [a, d] = await Promise.all([client('a'), client('d')]);
  const warehouse = await buildSource(path.join(inject('runDir'), P));
  envA = await registerEnvironment(h, 'a', `${P}-a`);
  envD = await registerEnvironment(h, 'd', `${P}-d`);
  author = await userWith(h, `${P}-rm1`, ['ReleaseManager']);
  manager = await userWith(h, `${P}-rm2`, ['ReleaseManager']);
  const srcDb = (await named(a, '/api/v1/database/', 'database_name', `${P}_src`))[0].id;
  const m = await admin('PUT', `/api/environments/${envA}/db-mappings/${envD}`, {
    json: { mappings: [{ source_database_id: srcDb, target_database_id: warehouse }] },
  });
  expect(m.status, m.text).toBe(200);

  // The dashboard's repository, its remote on Gitea: sync writes the companion files, committed and pushed.
  const g = gitea()!;
  const cfg = await admin('POST', '/api/git/configs', {
    json: { name: `${P}-gitea`, provider: 'gitea', base_url: g.baseUrl, owner: g.username, pat: g.token },
  });
  expect(cfg.status, cfg.text).toBe(201);
  await setIdentity(h, h.adminToken, 'Ada Admin', 'ada@example.com');
  const init = await admin('POST', G('init'), { json: { env_id: envA, config_id: cfg.body.id, create_remote: true } });
  expect(init.status, init.text).toBe(200);
  const sync = await admin('POST', G('sync'), { json: { env_id: envA } });
  expect(sync.status, sync.text).toBe(200);
  expect(sync.body.companions, JSON.stringify(sync.body.companions)).toMatchObject({ captured: true });
  const c = await admin('POST', G('commit'), { json: { env_id: envA, message: 'With its companions' } });
  expect(c.status, c.text).toBe(200);
  commit = c.body.commit;
  expect((await admin('POST', G('push'), { json: { env_id: envA } })).status).toBe(200);

  // The registry trusts the git server and Superset a (the fixture's database is a SQLite file: no host).
  const hosts = [new URL(g.baseUrl).hostname, new URL((await admin('GET', `/api/environments/${envA}`)).body.base_url).hostname];
  expect((await admin('PUT', `${V2}/registry`, { json: { hosts } })).status).toBe(200);
}, 400_000);
afterAll(async () => h?.close());

/** A candidate of the commit taken through artifacts, manifest, prepare, checks, a second person's approval and publish: its published item. */
async function release(name: string) {
  const r = await as(author)('POST', `${V2}/candidates`, {
    json: { name, target_env_id: envD, sources: [{ kind: 'git', dashboard_uuid: dashUuid, commit }] },
  });
  expect(r.status, r.text).toBe(201);
  const id = r.body.id;
  const imp = await as(author)('POST', `${V2}/candidates/${id}/artifacts`, { json: {} });
  expect(imp.status, imp.text).toBe(200);
  expect((await as(author)('POST', `${V2}/candidates/${id}/manifest`)).status).toBe(201);
  const prep = await as(author)('POST', `${V2}/candidates/${id}/prepare`);
  expect(prep.body, prep.text).toMatchObject({ status: 'prepared', violations: [] });
  const s = await as(author)('POST', `${V2}/candidates/${id}/checks`);
  expect(s.status, s.text).toBe(202);
  await waitTask(h, s.body.task_id);
  const check = await as(author)('GET', `${V2}/checks/${s.body.check_id}`);
  expect(check.body.status, JSON.stringify(check.body.checks)).toBe('passed');
  const ok = await as(manager)('POST', `${V2}/candidates/${id}/approve`, { json: { comment: 'with its companions' } });
  expect(ok.body, ok.text).toMatchObject({ decision: 'approve', state: 'approved', by: `${P}-rm2` });
  const pub = await as(manager)('POST', `${V2}/candidates/${id}/publish`, { json: {} });
  expect(pub.status, pub.text).toBe(200);
  const task = await waitTask(h, pub.body.task_id, 300_000);
  expect(task.status, JSON.stringify(task.result ?? task.error)).toBe('SUCCEEDED');
  expect(task.result.items).toHaveLength(1);
  return { id, item: task.result.items[0] };
}

/** What d holds of the companions, read from Superset. */
async function targetState(target: number) {
  const there = await get(d, `/api/v1/dashboard/${target}`);
  const [report] = await named(d, '/api/v1/report/', 'name', weekly);
  const layers = await named(d, '/api/v1/annotation_layer/', 'name', layerName);
  const charts = await Promise.all((await get<any[]>(d, `/api/v1/dashboard/${target}/charts`)).map((c) => get(d, `/api/v1/chart/${c.id}`)));
  return {
    owners: there.owners.map((x: any) => x.id).sort(),
    roles: there.roles.map((x: any) => x.name),
    tags: there.tags.map((x: any) => x.name).filter((n: string) => n.startsWith(P)),
    css: there.css,
    theme: there.theme ? (await get(d, `/api/v1/theme/${there.theme.id}`)).uuid : null,
    report: report ? await get(d, `/api/v1/report/${report.id}`) : null,
    reports: (await named(d, '/api/v1/report/', 'name', weekly)).length,
    layers: layers.map((l: any) => l.id),
    annotations: layers.length
      ? (await get<any[]>(d, `/api/v1/annotation_layer/${layers[0].id}/annotation/`)).map((x: any) => x.short_descr)
      : [],
    drawn: JSON.parse(charts.find((c: any) => c.uuid === rowsUuid).params).annotation_layers ?? [],
    templates: (await named(d, '/api/v1/css_template/', 'template_name', templateName)).length,
  };
}

describe.skipIf(!on)('a clean release with companion files', () => {
  it('the artifact of the commit carries the companion files, covered by its digest', async () => {
    const r = await as(author)('POST', `${V2}/candidates`, {
      json: { name: `${P} look`, target_env_id: envD, sources: [{ kind: 'git', dashboard_uuid: dashUuid, commit }] },
    });
    await as(author)('POST', `${V2}/candidates/${r.body.id}/artifacts`, { json: {} });
    const row = await h.knex('release_artifacts').where({ candidate_id: r.body.id }).first();
    expect(Object.keys(row.files)).toEqual(
      expect.arrayContaining([
        'companions/kinds.yaml',
        'companions/owners/admin.yaml',
        `companions/owners/${P}ann.yaml`,
        `companions/roles/${viewers}.yaml`,
        `companions/tags/${tagName}.yaml`,
        `companions/reports/${weekly}.yaml`,
        `companions/annotation_layers/${layerName}.yaml`,
        `companions/css_templates/${templateName}.yaml`,
        `companions/themes/${themeUuid}.yaml`,
      ]),
    );
    await as(author)('POST', `${V2}/candidates/${r.body.id}/reject`, { json: { comment: 'only looked' } });
  }, 120_000);

  it('a publish applies them into d: read back from Superset, listed per kind on the item', async () => {
    expect(await named(d, '/api/v1/report/', 'name', weekly)).toEqual([]);
    const first = await firstPublish();
    expect(first, JSON.stringify([first.error, first.differences, first.companions])).toMatchObject({
      status: 'published',
      outcome: 'succeeded',
      verified: true,
    });
    expect(first.companions_note).toBeUndefined();
    const target = first.target_dashboard_id;
    const s = await targetState(target);
    expect(s.owners).toEqual([await userIdOf(d, 'admin'), await userIdOf(d, `${P}ann`)].sort());
    expect(s.roles).toEqual([viewers]);
    expect(s.tags).toEqual([tagName]);
    expect(s.css).toBe(css);
    expect(s.theme).toBe(themeUuid);
    expect(s.report).toMatchObject({ crontab: '0 9 * * 1', active: false, dashboard: { id: target } });
    expect(s.layers).toHaveLength(1);
    expect(s.annotations).toEqual(['v1 launch']);
    expect(s.drawn).toEqual([expect.objectContaining({ sourceType: 'NATIVE', value: s.layers[0] })]);
    expect(s.templates).toBe(1);

    const items = (k: string) => kind(first, k).items.map((i: any) => [i.name, i.action, i.done]);
    expect(kind(first, 'roles')).toMatchObject({ mode: 'copy', available: true });
    expect(items('roles')).toEqual([[viewers, 'create', true]]);
    expect(items('owners')).toContainEqual([`${P}ann`, 'create', true]);
    expect(items('tags')).toContainEqual([tagName, 'create', true]);
    expect(items('reports')).toEqual([[weekly, 'create', true]]);
    expect(items('annotation_layers')).toContainEqual([layerName, 'create', true]);
    expect(items('css_templates')).toContainEqual([templateName, 'create', true]);
    expect(kind(first, 'themes').items.map((i: any) => i.done)).toContain(true);
  }, 900_000);

  it('a second release of the same commit changes nothing in d', async () => {
    const target = (await firstPublish()).target_dashboard_id;
    const before = await targetState(target);
    const { item } = await release(`${P} again`);
    expect(item, JSON.stringify([item.error, item.differences])).toMatchObject({
      status: 'published',
      verified: true,
      target_dashboard_id: target,
    });
    // An import drops a chart's native annotation entries and unlinks the dashboard's theme: putting them back are the only writes.
    const written = item.companions.flatMap((k: any) =>
      k.items
        .filter((i: any) => i.done || i.action === 'create' || i.action === 'update')
        .map((i: any) => `${k.kind}:${i.name}:${(i.fields ?? []).join(',')}`),
    );
    for (const w of written)
      expect([`annotation_layers:annotation layer ids:params.annotation_layers`, `themes:${themeName}:dashboard.theme`]).toContain(w);
    const after = await targetState(target);
    const stable = (r: any) => r && { id: r.id, crontab: r.crontab, active: r.active, dashboard: r.dashboard?.id };
    expect({ ...after, report: stable(after.report) }).toEqual({ ...before, report: stable(before.report) });
    expect(after.reports).toBe(1);
  }, 900_000);
});
