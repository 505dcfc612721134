// No test lets the wall clock decide its outcome (issue 48): no Promise.race with a timer among its
// contenders and no comparison of Date.now()/performance.now() anywhere under test/, outside the
// named helpers below, each with why the clock there decides no outcome. A hold is released by
// the event it waits for, and the test's own timeout is the hang bound. Found with a real parser
// (test/support/timer-races.ts), which is itself checked on two fixtures.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { timerFindings } from '../support/timer-races.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const FIXTURES = path.join(import.meta.dirname, 'fixtures');

/** `path#function` → why its clock decides no outcome a test asserts. */
const ALLOWED: Record<string, string> = {
  'test/support/harness.ts#waitFor':
    'a poll for an event; its deadline is a hang bound that throws, failing the test like its timeout would',
  'test/support/harness.ts#waitForTask': 'the same, for a task reaching a state',
  'test/platform/all-in-one.test.ts#until': 'the same, for the all-in-one process answering (it also fails when the process exits)',
  'test/support/superset/async-instance.ts#until': 'a hang bound on starting Redis/Celery for the async-query instance',
  'test/support/superset/instance.ts#serve': 'a hang bound on a Superset instance starting (global setup fails with its log)',
  'test/support/superset/instance.ts#within': 'teardown: how long a stopping Superset gets before it is killed',
  'test/support/gitea/instance.ts#serve': 'a hang bound on Gitea starting (global setup fails with its log)',
  'test/support/doc-commands.ts#ended': "teardown: Ctrl-C's grace before the walk-through's process group is killed",
  'test/support/fake-superset.ts#verifyToken': "the fake's JWT expiry, as Superset checks its own tokens; tests never reach it",
  'test/auth/oidc.test.ts#store': 'a cookie jar dropping cookies the provider expired (it stamps deletions in the past)',
};

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return p === FIXTURES ? [] : testFiles(p);
    return /\.(ts|tsx|mts)$/.test(e.name) ? [p] : [];
  });
}

const fixture = (name: string) => timerFindings(`fixtures/${name}`, fs.readFileSync(path.join(FIXTURES, name), 'utf8'));

describe('no timer decides a test', () => {
  it('finds every timer race and wall-clock comparison of the bad fixture, by function and line', () => {
    expect(fixture('timer-races-bad.ts.txt').map((f) => `${f.kind} ${f.where.split('#')[1]}:${f.line}`)).toEqual([
      'timer race heldUntilSeenOrBound:6',
      'timer race racedInline:11',
      'timer race racedSleep:15',
      'timer race racedAbortSignal:20',
      'wall-clock comparison deadlineCompared:24',
      'wall-clock comparison elapsedAsserted:28',
      'wall-clock comparison elapsedNamed:35',
      'wall-clock comparison newDateCompared:39',
      'timer race anyWithTimer:43',
      'timer race racedTimersPromises:48',
    ]);
  });

  it('finds nothing in the good fixture: a hold released by an event, a race of events, a poll interval, a stamp', () => {
    expect(fixture('timer-races-good.ts.txt')).toEqual([]);
  });

  it('holds under test/: every finding is a named helper of the allow-list, and every entry is still needed', () => {
    const found = testFiles(path.join(ROOT, 'test')).flatMap((f) => timerFindings(path.relative(ROOT, f), fs.readFileSync(f, 'utf8')));
    const offending = found.filter((f) => !(f.where in ALLOWED)).map((f) => `${f.where}:${f.line} (${f.kind})`);
    expect(offending, 'release the hold by its event (the test timeout is the hang bound), or inject the clock').toEqual([]);
    const used = new Set(found.map((f) => f.where));
    expect(Object.keys(ALLOWED).filter((k) => !used.has(k))).toEqual([]);
  });
});
