import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { ensureHelmTools, KUBERNETES_VERSIONS, type HelmTools } from './helm-tools.ts';
import { CHART_DIR, renderValuesDoc, VALUES_DOC } from './helm-values-doc.ts';

/**
 * `npm run helm:check`: helm lints the chart and renders it with each value set of its `ci/`
 * folder (minimal, production-like, everything on) for each checked Kubernetes release, and
 * kubeconform validates every rendered manifest, strictly, against that release's API schemas (and
 * the ServiceMonitor CRD's); docs/helm-values.md must be the page the schema makes. Exits non-zero
 * with what failed.
 */
export const VALUE_SETS = ['minimal', 'production', 'everything'] as const;

export function valueSetPath(set: string): string {
  return path.join(CHART_DIR, 'ci', `${set}-values.yaml`);
}

/** `helm template` of the chart with the given value files and `--set` pairs; throws with helm's message on failure. */
export function renderChart(tools: HelmTools, opts: { values?: string[]; set?: string[]; kubernetesVersion?: string } = {}): string {
  const args = [
    'template',
    'switchyard',
    CHART_DIR,
    '--namespace',
    'switchyard',
    '--kube-version',
    opts.kubernetesVersion ?? KUBERNETES_VERSIONS.at(-1)!,
  ];
  for (const v of opts.values ?? []) args.push('-f', v);
  for (const s of opts.set ?? []) args.push('--set', s);
  const r = spawnSync(tools.helm, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`helm template failed: ${r.stderr.trim()}`);
  return r.stdout;
}

function lint(tools: HelmTools, set: string): string | undefined {
  const r = spawnSync(tools.helm, ['lint', CHART_DIR, '--strict', '-f', valueSetPath(set), '--kube-version', KUBERNETES_VERSIONS.at(-1)!], {
    encoding: 'utf8',
  });
  return r.status === 0 ? undefined : `helm lint with ${set} values: ${(r.stdout + r.stderr).trim()}`;
}

function validate(tools: HelmTools, manifests: string, version: string): { ok: boolean; summary: string } {
  const r = spawnSync(
    tools.kubeconform,
    ['-strict', '-summary', '-kubernetes-version', version, '-schema-location', tools.schemaLocation, '-'],
    {
      input: manifests,
      encoding: 'utf8',
    },
  );
  return { ok: r.status === 0, summary: (r.stdout + r.stderr).trim() };
}

export function helmCheck(log: (m: string) => void = console.log): string[] {
  const tools = ensureHelmTools({ log });
  const failures: string[] = [];
  for (const set of VALUE_SETS) {
    const lintFailure = lint(tools, set);
    if (lintFailure) failures.push(lintFailure);
    for (const version of KUBERNETES_VERSIONS) {
      let manifests: string;
      try {
        manifests = renderChart(tools, { values: [valueSetPath(set)], kubernetesVersion: version });
      } catch (err) {
        failures.push(`${set} values on Kubernetes ${version}: ${(err as Error).message}`);
        continue;
      }
      const { ok, summary } = validate(tools, manifests, version);
      log(`${set} values, Kubernetes ${version}: ${summary.split('\n').at(-1)}`);
      if (!ok) failures.push(`${set} values on Kubernetes ${version}:\n${summary}`);
    }
  }
  const doc = fs.existsSync(VALUES_DOC) ? fs.readFileSync(VALUES_DOC, 'utf8') : '';
  if (doc !== renderValuesDoc())
    failures.push(`${path.relative(PROJECT_ROOT, VALUES_DOC)} is not current: run node scripts/helm-values-doc.ts`);
  return failures;
}

if (import.meta.main) {
  const failures = helmCheck();
  if (failures.length) {
    console.error(`helm:check failed:\n${failures.join('\n\n')}`);
    process.exit(1);
  }
  const helm = ensureHelmTools({ log: () => undefined }).helm;
  console.log(
    `helm:check: the chart lints and renders valid manifests for ${VALUE_SETS.length} value sets on Kubernetes ${KUBERNETES_VERSIONS.join(' and ')} (${execFileSync(helm, ['version', '--short'], { encoding: 'utf8' }).trim()})`,
  );
}
