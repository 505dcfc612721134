// Histories recorded by earlier code replayed on today's workflows (Temporal's replayer, no
// server): a task started before a deploy is finished by the code after it, and a change of a
// workflow's commands that is not behind a patch marker (docs/layout.md) fails here as the
// nondeterminism it would be in production. The histories are recorded by
// ./histories/record-migration.ts at the commit each file names, the one before the change.
import fs from 'node:fs';
import path from 'node:path';
import { DefaultLogger, Runtime, Worker, type WorkflowBundle } from '@temporalio/worker';
import { beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflows } from '../support/time-skipping.ts';

const DIR = path.join(import.meta.dirname, 'histories');
const FILES = fs.readdirSync(DIR).filter((f) => f.endsWith('.json'));

interface Recorded {
  commit: string;
  workflowId: string;
  runs: unknown[];
}

let bundle: WorkflowBundle;
beforeAll(async () => {
  // The replayer's own lines only on failure: the assertion is the replay's outcome.
  Runtime.install({ logger: new DefaultLogger('ERROR'), telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } } });
  bundle = await bundleWorkflows();
});

describe('workflow histories of earlier code replay on today’s workflows', () => {
  it('has the recorded histories (a missing folder must not pass as nothing to replay)', () => {
    // Before the first patch marker (11f5b73: verification after the batches) and before the latest (f98f23d: before wide reruns).
    const recorded = ['first', 'rerun', 'rerun-continued'].flatMap((s) => ['11f5b73', 'f98f23d'].map((c) => `migration-${s}-${c}.json`));
    expect(FILES.sort()).toEqual(recorded.sort());
  });

  it.each(FILES)('%s: every run replays without nondeterminism', async (file) => {
    const recorded = JSON.parse(fs.readFileSync(path.join(DIR, file), 'utf8')) as Recorded;
    expect(recorded.runs.length).toBeGreaterThan(0);
    for (const [at, history] of recorded.runs.entries())
      await Worker.runReplayHistory(
        { workflowBundle: bundle, replayName: `${file}-run${at + 1}` },
        history,
        `${recorded.workflowId}-run${at + 1}`,
      );
  });
});
