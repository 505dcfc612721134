import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../lib/config.ts';
import { versionFolder, writeCrdSchemas, writeKubernetesSchemas } from './helm-schemas.ts';

/**
 * What `npm run helm:check` needs, built from Go modules and cached in `.tools/helm/`: helm and
 * kubeconform (`go install`), and the Kubernetes API schemas of two supported releases, converted
 * from the OpenAPI document each release's Go module ships (kubeconform would download them from a
 * host this machine cannot reach), plus the Prometheus Operator's ServiceMonitor, from the CRD its
 * Go module ships. `node scripts/helm-tools.ts` builds them (a phase of .ci/run).
 */
export const HELM_VERSION = 'v3.22.0';
export const KUBECONFORM_VERSION = 'v0.8.0';
/** The oldest and newest Kubernetes releases the chart is checked against. */
export const KUBERNETES_VERSIONS = ['1.35.4', '1.37.2'] as const;
export const PROMETHEUS_OPERATOR_VERSION = 'v0.85.0';
/** Bumped when the conversion changes, so a cache made by an older one is made again. */
const SCHEMA_LAYOUT = 'schemas-1';

export interface HelmTools {
  helm: string;
  kubeconform: string;
  /** kubeconform's -schema-location template over the converted schemas. */
  schemaLocation: string;
}

const toolsDir = () => path.join(PROJECT_ROOT, '.tools', 'helm');

function goBinary(): string {
  const candidates = [process.env.GO, '/usr/local/go/bin/go'].filter((g): g is string => !!g);
  for (const g of candidates) if (fs.existsSync(g)) return g;
  try {
    return execFileSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('Go is not installed, so helm and kubeconform cannot be built (Debian: `apt-get install golang-go`).');
  }
}

const goEnv = (extra: Record<string, string> = {}) => ({ ...process.env, GOFLAGS: '-mod=mod', CGO_ENABLED: '0', ...extra });

/** A module's folder in Go's module cache, downloaded when missing. */
function moduleDir(go: string, module: string, version: string): string {
  const out = execFileSync(go, ['mod', 'download', '-json', `${module}@${version}`], { encoding: 'utf8', env: goEnv(), cwd: toolsDir() });
  return (JSON.parse(out) as { Dir: string }).Dir;
}

/** Builds into a staging folder and renames it into place, so a build cut short leaves nothing half-made. */
function buildOnce(dir: string, done: (d: string) => boolean, build: (staging: string) => void): void {
  if (done(dir)) return;
  const staging = `${dir}.building-${process.pid}`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true });
  try {
    build(staging);
    if (!done(dir)) {
      fs.rmSync(dir, { recursive: true, force: true });
      fs.renameSync(staging, dir);
    }
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
}

function ensureBinaries(go: string, log: (m: string) => void): { helm: string; kubeconform: string } {
  const dir = path.join(toolsDir(), `helm-${HELM_VERSION}-kubeconform-${KUBECONFORM_VERSION}`);
  const bins = { helm: path.join(dir, 'helm'), kubeconform: path.join(dir, 'kubeconform') };
  buildOnce(
    dir,
    () => fs.existsSync(bins.helm) && fs.existsSync(bins.kubeconform),
    (staging) => {
      log(
        `building helm ${HELM_VERSION} and kubeconform ${KUBECONFORM_VERSION} with go install (one time: 8 minutes measured on a busy 2-core machine)...`,
      );
      // One `go install` per module: it takes several packages at a version only from one module.
      for (const pkg of [`helm.sh/helm/v3/cmd/helm@${HELM_VERSION}`, `github.com/yannh/kubeconform/cmd/kubeconform@${KUBECONFORM_VERSION}`])
        execFileSync(go, ['install', pkg], { env: goEnv({ GOBIN: staging }), cwd: toolsDir(), stdio: ['ignore', 'inherit', 'inherit'] });
    },
  );
  return bins;
}

function ensureSchemas(go: string, log: (m: string) => void): string {
  const root = path.join(toolsDir(), SCHEMA_LAYOUT);
  const complete = (d: string) => fs.existsSync(path.join(d, '.complete'));
  buildOnce(root, complete, (staging) => {
    const operator = moduleDir(go, 'github.com/prometheus-operator/prometheus-operator', PROMETHEUS_OPERATOR_VERSION);
    const serviceMonitorCrd = path.join(operator, 'example', 'prometheus-operator-crd', 'monitoring.coreos.com_servicemonitors.yaml');
    for (const version of KUBERNETES_VERSIONS) {
      log(`converting the Kubernetes ${version} API schemas (k8s.io/kubernetes's api/openapi-spec)...`);
      const kubernetes = moduleDir(go, 'k8s.io/kubernetes', `v${version}`);
      const folder = versionFolder(staging, version);
      const kinds = writeKubernetesSchemas(path.join(kubernetes, 'api', 'openapi-spec', 'swagger.json'), folder);
      const crds = writeCrdSchemas(serviceMonitorCrd, folder);
      log(`  ${kinds} kinds and ${crds} ServiceMonitor version(s) in ${path.relative(PROJECT_ROOT, versionFolder(root, version))}`);
    }
    fs.writeFileSync(path.join(staging, '.complete'), `${KUBERNETES_VERSIONS.join(' ')} ${PROMETHEUS_OPERATOR_VERSION}\n`);
  });
  return root;
}

export function ensureHelmTools(opts: { log?: (m: string) => void } = {}): HelmTools {
  const log = opts.log ?? ((m: string) => console.error(m));
  fs.mkdirSync(toolsDir(), { recursive: true });
  const go = goBinary();
  const bins = ensureBinaries(go, log);
  const schemas = ensureSchemas(go, log);
  return {
    ...bins,
    schemaLocation: `${schemas}/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
  };
}

if (import.meta.main) {
  const tools = ensureHelmTools();
  console.log(`helm: ${execFileSync(tools.helm, ['version', '--short'], { encoding: 'utf8' }).trim()}`);
  console.log(`kubeconform: ${execFileSync(tools.kubeconform, ['-v'], { encoding: 'utf8' }).trim()}`);
}
