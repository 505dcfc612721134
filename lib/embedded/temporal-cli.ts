import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PROJECT_ROOT } from '../config.ts';

/** The pinned CLI; `temporal --version` of a `go install` build says 0.0.0-DEV, so the cache is keyed by this path. */
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const MODULE = 'github.com/temporalio/cli/cmd/temporal';

export function cachedCliPath(toolsDir = path.join(PROJECT_ROOT, '.tools')): string {
  return path.join(toolsDir, 'temporal-cli', TEMPORAL_CLI_VERSION, 'temporal');
}

function onPath(name: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

/**
 * Finds the Temporal CLI: TEMPORAL_CLI, then `temporal` on PATH, then the project cache; else
 * builds the pinned version with `go install` into the cache (about 3.5 minutes cold on 2 cores).
 */
export function ensureTemporalCli(opts: { explicit?: string; log?: (m: string) => void } = {}): string {
  const log = opts.log ?? ((m: string) => console.error(m));
  if (opts.explicit) {
    if (!fs.existsSync(opts.explicit)) throw new Error(`TEMPORAL_CLI points at ${opts.explicit}, which does not exist`);
    return opts.explicit;
  }
  const fromPath = onPath('temporal');
  if (fromPath) return fromPath;
  const target = cachedCliPath();
  if (fs.existsSync(target)) return target;

  const go = onPath('go');
  if (!go) {
    throw new Error(
      'The Temporal CLI was not found (TEMPORAL_CLI unset, no `temporal` on PATH) and Go is not installed to build it. ' +
        'Install Go 1.23 or newer (Debian: `apt-get install golang-go`; or https://go.dev/dl), or set TEMPORAL_CLI to a `temporal` binary.',
    );
  }
  const dir = path.dirname(target);
  const staging = `${dir}.building-${process.pid}`;
  fs.mkdirSync(staging, { recursive: true });
  log(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (one time, a few minutes)...`);
  const started = Date.now();
  try {
    execFileSync(go, ['install', `${MODULE}@${TEMPORAL_CLI_VERSION}`], {
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0' },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    fs.mkdirSync(path.dirname(dir), { recursive: true });
    // A concurrent build may have won; either binary is the same pinned version.
    if (!fs.existsSync(target)) fs.renameSync(staging, dir);
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal CLI ready at ${target} (${Math.round((Date.now() - started) / 1000)} s)`);
  return target;
}

if (import.meta.main) {
  console.log(ensureTemporalCli({ explicit: process.env.TEMPORAL_CLI || undefined }));
}
