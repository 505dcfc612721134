import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadAll } from 'js-yaml';
import { marked } from 'marked';
import { beforeAll, describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../lib/config.ts';
import { renderChart, valueSetPath } from '../../scripts/helm-check.ts';
import { ensureHelmTools, KUBERNETES_VERSIONS, type HelmTools } from '../../scripts/helm-tools.ts';
import { CHART_DIR } from '../../scripts/helm-values-doc.ts';

/**
 * The Helm chart (deploy/helm/switchyard): `npm run helm:check` as `npm test` runs it (helm lint,
 * three value sets rendered for two Kubernetes releases, every manifest validated strictly), and
 * what its values schema and templates must refuse or keep. helm and kubeconform are built from
 * their Go modules on the first run (8 minutes measured on a busy 2-core machine; .ci/run does it in a phase of its own).
 */
let tools: HelmTools;
beforeAll(() => {
  tools = ensureHelmTools({ log: () => undefined });
}, 30 * 60_000);

type Manifest = { kind: string; metadata: { name: string; annotations?: Record<string, string> }; [k: string]: any };
const manifests = (text: string) => (loadAll(text) as (Manifest | null)[]).filter((m): m is Manifest => !!m);
const minimal = () => [valueSetPath('minimal')];

function lintWith(set: string[], values = minimal()): { ok: boolean; output: string } {
  const args = ['lint', CHART_DIR, '--strict', '--kube-version', KUBERNETES_VERSIONS.at(-1)!];
  for (const v of values) args.push('-f', v);
  for (const s of set) args.push('--set', s);
  const r = spawnSync(tools.helm, args, { encoding: 'utf8' });
  return { ok: r.status === 0, output: r.stdout + r.stderr };
}

/** Refused by the values schema: helm lint and helm template both fail; returns lint's message. */
function refused(set: string[], values = minimal()): string {
  const r = lintWith(set, values);
  expect(r.ok, `helm lint accepted --set ${set.join(' ')}`).toBe(false);
  expect(() => renderChart(tools, { values, set })).toThrow();
  return r.output;
}

/** Refused by a template's `required` or `fail` (which helm lint only warns about): helm template fails; returns its message. */
function refusedAtRender(set: string[], values = minimal()): string {
  try {
    renderChart(tools, { values, set });
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`helm template accepted --set ${set.join(' ')}`);
}

describe('npm run helm:check', () => {
  it(
    'lints the chart and validates what it renders for the minimal, production-like and everything-on values on two Kubernetes releases',
    () => {
      const r = spawnSync(process.execPath, ['scripts/helm-check.ts'], { cwd: PROJECT_ROOT, encoding: 'utf8' });
      expect(r.status, r.stdout + r.stderr).toBe(0);
      for (const set of ['minimal', 'production', 'everything'])
        for (const v of KUBERNETES_VERSIONS)
          expect(r.stdout).toMatch(new RegExp(`${set} values, Kubernetes ${v.replace(/\./g, '\\.')}: .*Invalid: 0, Errors: 0, Skipped: 0`));
      expect(r.stdout).toContain('helm:check: the chart lints and renders valid manifests');
    },
    10 * 60_000,
  );

  it('fails on a manifest the Kubernetes schema refuses (an unknown container field, a wrong type, a ServiceMonitor field)', () => {
    const rendered = renderChart(tools, { values: [valueSetPath('everything')] });
    const broken = rendered
      .replace(/(\n\s+- name: worker\n)/, '$1          resourcez: {}\n')
      .replace(/(kind: ServiceMonitor[\s\S]*?spec:\n)/, '$1  endpointz: []\n');
    expect(broken).not.toBe(rendered);
    const r = spawnSync(
      tools.kubeconform,
      ['-strict', '-summary', '-kubernetes-version', KUBERNETES_VERSIONS[0], '-schema-location', tools.schemaLocation, '-'],
      {
        input: broken,
        encoding: 'utf8',
      },
    );
    expect(r.status).not.toBe(0);
    expect(r.stdout).toContain("additional properties 'resourcez' not allowed");
    expect(r.stdout).toContain("additional properties 'endpointz' not allowed");
  });
});

describe('the values schema', () => {
  it('refuses a negative replica count', () => {
    expect(refused(['worker.replicas=-1'])).toContain("at '/worker/replicas': minimum: got -1, want 0");
    expect(refused(['api.replicas=-2'])).toContain("at '/api/replicas': minimum: got -2, want 0");
    expect(lintWith(['worker.replicas=0']).ok).toBe(true);
  });

  it('refuses an unknown key at the top and at every depth', () => {
    for (const key of [
      'replicas=2',
      'api.replica=2',
      'config.TEMPORAL_ADRESS=x',
      'worker.autoscaling.podsMetric.target=1',
      'metrics.serviceMonitor.scrapeTimeout=10s',
    ])
      expect(refused([key])).toContain(`additional properties '${key.split('=')[0]!.split('.').at(-1)}' not allowed`);
  });

  it('refuses a wrong type, an out-of-range setting and a short secret key', () => {
    expect(refused(['config.TASK_ITEMS_PER_RUN=5000'])).toMatch(/TASK_ITEMS_PER_RUN/);
    expect(refused(['config.LOG_LEVEL=loud'])).toMatch(/LOG_LEVEL/);
    expect(refused(['secrets.SWITCHYARD_SECRET_KEY=short'])).toMatch(/SWITCHYARD_SECRET_KEY/);
    expect(refused(['metrics.apiPort=70000'])).toMatch(/apiPort/);
  });

  it('needs the Temporal address and the database, and takes secrets from one place only', () => {
    expect(refusedAtRender(['config.TEMPORAL_ADDRESS='])).toMatch(/TEMPORAL_ADDRESS is required/);
    expect(refusedAtRender(['secrets.DATABASE_URL='])).toMatch(/DATABASE_URL is required/);
    expect(refusedAtRender(['existingSecret=mine'])).toMatch(
      /existingSecret is set, so secrets must stay empty \(found DATABASE_URL, SWITCHYARD_SECRET_KEY\)/,
    );
  });
});

describe('the rendered chart', () => {
  it('carries every setting of docs/running.md: as a value, or set by the chart, or one only the embedded stack reads', () => {
    const doc = fs.readFileSync(path.join(PROJECT_ROOT, 'docs', 'running.md'), 'utf8');
    const section = doc.slice(doc.indexOf('## Configuration'), doc.indexOf('### External PostgreSQL and Temporal'));
    const table = marked.lexer(section).find((t) => t.type === 'table') as { rows: { text: string }[][] } | undefined;
    const names = (table?.rows ?? []).flatMap((r) => [...r[0]!.text.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1]!));
    expect(names.length).toBeGreaterThan(40);
    const schema = JSON.parse(fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8'));
    const values = new Set([...Object.keys(schema.properties.config.properties), ...Object.keys(schema.properties.secrets.properties)]);
    const byChart = new Set(
      ['production', 'everything'].flatMap((set) =>
        Object.keys(manifests(renderChart(tools, { values: [valueSetPath(set)] })).find((m) => m.kind === 'ConfigMap')!.data),
      ),
    );
    const embeddedOnly = new Set(['EMBEDDED_POSTGRES_PORT', 'TEMPORAL_CLI', 'TEMPORAL_PORT', 'TEMPORAL_UI_PORT']);
    const workerOnly = new Set(['WORKER_METRICS_PORT']); // the worker container's own env
    const missing = names.filter((n) => !values.has(n) && !byChart.has(n) && !embeddedOnly.has(n) && !workerOnly.has(n));
    expect(missing).toEqual([]);
  });

  it('keeps secret settings out of the ConfigMap, and runs the commands of `npm run api` and `npm run worker`', () => {
    const all = manifests(renderChart(tools, { values: [valueSetPath('everything')] }));
    const configMap = all.find((m) => m.kind === 'ConfigMap')!;
    const secret = all.find((m) => m.kind === 'Secret')!;
    const schema = JSON.parse(fs.readFileSync(path.join(CHART_DIR, 'values.schema.json'), 'utf8'));
    for (const key of Object.keys(schema.properties.secrets.properties)) {
      expect(Object.keys(configMap.data)).not.toContain(key);
      expect(Object.keys(secret.stringData)).toContain(key);
    }
    const scripts = JSON.parse(fs.readFileSync(path.join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts;
    for (const component of ['api', 'worker']) {
      const deployment = all.find((m) => m.kind === 'Deployment' && m.metadata.name.endsWith(`-${component}`))!;
      const [container] = deployment.spec.template.spec.containers;
      expect(container.command).toEqual(scripts[component].split(/\s+/));
      const [init] = deployment.spec.template.spec.initContainers;
      expect(init.command).toEqual(['node', 'scripts/migrate.ts']);
      expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
      expect(deployment.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true });
    }
    expect(configMap.data.DATABASE_MIGRATE_AT_START).toBe('false');
  });

  it("opens the NetworkPolicy's egress to ALLOWED_UPSTREAM_HOSTS's addresses and ranges, names its host names, and allows anywhere when it is unset", () => {
    const set = ['networkPolicy.enabled=true', 'config.ALLOWED_UPSTREAM_HOSTS=10.1.2.3\\, 10.9.0.0/16\\,superset.example.com'];
    const policies = manifests(renderChart(tools, { values: minimal(), set })).filter((m) => m.kind === 'NetworkPolicy');
    expect(policies.map((p) => p.metadata.name).sort()).toEqual(['switchyard-api', 'switchyard-worker']);
    for (const p of policies) {
      const cidrs = p.spec.egress.flatMap((rule: any) => (rule.to ?? []).flatMap((peer: any) => (peer.ipBlock ? [peer.ipBlock.cidr] : [])));
      expect(cidrs).toEqual(['10.1.2.3/32', '10.9.0.0/16']);
      expect(p.metadata.annotations?.['switchyard.io/upstream-host-names']).toBe('superset.example.com');
      expect(p.spec.egress).not.toContainEqual({});
    }
    const open = manifests(renderChart(tools, { values: minimal(), set: ['networkPolicy.enabled=true'] })).filter(
      (m) => m.kind === 'NetworkPolicy',
    );
    for (const p of open) expect(p.spec.egress).toContainEqual({});
  });

  it('autoscales the workers on CPU and a worker metric, leaving the replica count to the autoscaler', () => {
    const all = manifests(renderChart(tools, { values: [valueSetPath('everything')] }));
    const hpa = all.find((m) => m.kind === 'HorizontalPodAutoscaler')!;
    expect(hpa.spec.metrics.map((m: any) => m.type)).toEqual(['Resource', 'Pods']);
    expect(hpa.spec.metrics[1].pods.metric.name).toBe('temporal_worker_task_slots_used');
    const worker = all.find((m) => m.kind === 'Deployment' && m.metadata.name.endsWith('-worker'))!;
    expect(worker.spec.replicas).toBeUndefined();
    expect(refusedAtRender(['worker.autoscaling.enabled=true', 'worker.autoscaling.targetCPUUtilizationPercentage=0'])).toMatch(
      /needs targetCPUUtilizationPercentage or podsMetric/,
    );
  });
});
