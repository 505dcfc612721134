// Tasks named by the start of their id, as people copy git hashes ("status of task 7f1c2a"): the
// lookup is a store query among the tasks the caller may see; one fits, it answers; several, it
// asks back with them and the reply completes the command; none, it says so.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewTask } from '../../db/tasks/store.ts';
import { createHarness, type Harness } from '../support/harness.ts';
import { createUserWithRoles } from '../support/environments.ts';

let h: Harness;
let alice: { id: string; token: string };
let bob: { id: string; token: string };

const uuid = (head: string, n: number) => `${head}-0000-4000-8000-${String(n).padStart(12, '0')}`;
const ALICE_A = `selfcheck-${uuid('7f1c2a00', 1)}`;
const ALICE_B = `selfcheck-${uuid('7f1c2a11', 2)}`;
const ALICE_MIGRATION = `migration-${uuid('0b5e9d31', 3)}`;
const BOB_OWN = `selfcheck-${uuid('7f1c2a22', 4)}`;

/** A task row as the API would write it, with the id chosen so that prefixes collide on purpose. */
async function taskRow(id: string, owner: { id: string }, username: string) {
  const type = id.slice(0, id.indexOf('-')) as NewTask['type'];
  const { created } = await h.boot.context.stores.tasks.create({
    id,
    type,
    ownerId: owner.id,
    ownerUsername: username,
    envIds: [],
    dashboardIds: [],
    params: {},
    idempotencyKey: null,
    summary: `${type} for the prefix test`,
    details: null,
    workflowType: 'selfcheckWorkflow',
    workflowInput: {},
    firstLogLine: `task created by ${username}`,
  });
  expect(created).toBe(true);
}

beforeAll(async () => {
  h = await createHarness();
  const role = await h.request('POST', '/api/admin/roles', {
    token: h.adminToken,
    json: { name: 'TalkOnly', permissions: ['assistant:USE'] },
  });
  expect(role.status, role.text).toBe(201);
  // Both see their own tasks only (no tasks:READ).
  alice = await createUserWithRoles(h, 'prefix-alice', ['TalkOnly']);
  bob = await createUserWithRoles(h, 'prefix-bob', ['TalkOnly']);
  for (const id of [ALICE_A, ALICE_B, ALICE_MIGRATION]) await taskRow(id, alice, 'prefix-alice');
  await taskRow(BOB_OWN, bob, 'prefix-bob');
}, 120_000);
afterAll(async () => h?.close());

const say = (token: string, text: string, extra: Record<string, unknown> = {}) =>
  h.request('POST', '/api/assistant/messages', { token, json: { text, ...extra } });

describe('a task named by the start of its id', () => {
  it.each([
    ['status of task 0b5e9d', 'status'],
    ['статус задачи 0b5e9d31', 'status'],
    ['покажи логи задачи 0b5e9d', 'logs'],
    ['show the logs of task 0b5e9d31-0000', 'logs'],
    ['status of task migration-0b5e9d', 'status'],
  ])('%s: the one task it starts', async (text, operation) => {
    const r = await say(alice.token, text);
    expect(r.status, r.text).toBe(200);
    expect(r.body).toMatchObject({ state: 'executed', intent: { domain: 'tasks', operation } });
    expect(operation === 'status' ? r.body.data.task.id : r.body.data.task_id).toBe(ALICE_MIGRATION);
  });

  it('asks back with the candidates when several fit, and the reply with more of the id completes the command', async () => {
    const r = await say(alice.token, 'статус задачи 7f1c2a');
    expect(r.status, r.text).toBe(200);
    expect(r.body.state).toBe('needs_clarification');
    expect(r.body.data).toMatchObject({ ambiguous: 'task', mention: '7f1c2a', total: 2 });
    expect(r.body.data.candidates.map((c: any) => c.id).sort()).toEqual([ALICE_A, ALICE_B]);
    expect(r.body.text).toContain(ALICE_A);
    expect(r.body.text).toContain(ALICE_B);
    // Bob's task with the same start is not Alice's to see: never a candidate.
    expect(r.body.text).not.toContain(BOB_OWN);
    const reply = await say(alice.token, '7f1c2a11', { conversation_id: r.body.conversation_id });
    expect(reply.status, reply.text).toBe(200);
    expect(reply.body).toMatchObject({
      state: 'executed',
      intent: { domain: 'tasks', operation: 'status' },
      data: { task: { id: ALICE_B } },
    });

    const en = await say(alice.token, 'logs of task 7f1c2a');
    expect(en.body).toMatchObject({ state: 'needs_clarification', data: { ambiguous: 'task' } });
    expect(en.body.text).toMatch(/matches several tasks/);
  });

  it('counts only the tasks the caller may see: the same start is one task for Bob', async () => {
    const r = await say(bob.token, 'status of task 7f1c2a');
    expect(r.body).toMatchObject({ state: 'executed', data: { task: { id: BOB_OWN } } });
    // Alice's migration is unknown to Bob, as its full id would be.
    const hidden = await say(bob.token, 'status of task 0b5e9d');
    expect(hidden.body).toMatchObject({ state: 'needs_clarification', data: { not_found: 'task', mention: '0b5e9d' } });
  });

  it('says so when no task starts that way, in the language asked', async () => {
    const en = await say(alice.token, 'status of task abcdef12');
    expect(en.body).toMatchObject({ state: 'needs_clarification', data: { not_found: 'task', mention: 'abcdef12' } });
    expect(en.body.text).toContain(`No task's id starts with "abcdef12"`);
    const ru = await say(alice.token, 'покажи логи задачи abcdef12');
    expect(ru.body.text).toContain('Нет задачи, чей идентификатор начинается с «abcdef12»');
    // The type in front narrows the search: no backup starts with 0b5e9d.
    const typed = await say(alice.token, 'status of task backup-0b5e9d');
    expect(typed.body).toMatchObject({ state: 'needs_clarification', data: { not_found: 'task' } });
  });
});
