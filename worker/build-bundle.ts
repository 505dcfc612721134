import fs from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_INTERCEPTOR_MODULES, WORKFLOWS_PATH } from './create-worker.ts';

/**
 * Pre-builds the workflow bundle, so workers load it instead of running webpack themselves
 * (faster start, and the bundler's memory never lands in a worker process).
 * Usage: node worker/build-bundle.ts <output.js>
 */
export async function buildWorkflowBundle(out: string): Promise<string> {
  const quiet = {
    log() {},
    trace() {},
    debug() {},
    info() {},
    warn: (m: string) => console.warn(m),
    error: (m: string) => console.error(m),
  };
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    workflowInterceptorModules: WORKFLOW_INTERCEPTOR_MODULES,
    logger: quiet,
  });
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, code);
  return out;
}

if (import.meta.main) {
  const out = process.argv[2];
  if (!out) {
    console.error('usage: node worker/build-bundle.ts <output.js>');
    process.exit(2);
  }
  await buildWorkflowBundle(path.resolve(out));
}
