/**
 * What the companion kinds read of a source, kept and played back: a capture (./capture.ts)
 * records the answers of the source-side reads (the dashboard, its charts and datasets, the lists
 * of reports, tags, layers, templates, queries, accounts and roles) while the kinds compare, and
 * writes them as documents (./documents.ts); a deploy or a restore replays the documents as such
 * a recording (./documents-replay.ts) and runs the same kinds with it as their source, so the
 * companions are put back by name exactly as a migration would carry them. Only reads are
 * recorded; a recording never writes. A recording is keyed by client method names, so it is never
 * stored any more: only backups of format 1 hold one (activities/backups/companions-v1.ts).
 */
import type { SupersetClient } from '../../../lib/superset/client.ts';
import { SupersetNotFoundError } from '../../../lib/superset/errors.ts';
import type { ClientResource } from './kind.ts';
import { COMPANION_KIND_MODULES } from './kinds.ts';
import { type Recording, recordingKey } from './recording-key.ts';

export { type Recording, recordingKey } from './recording-key.ts';

/**
 * The resources of the client the kinds read through: the dashboard's views and both sides' people
 * (every kind's), and each kind's own (./kinds.ts).
 */
export const READ_RESOURCES: readonly ClientResource[] = [
  ...new Set<ClientResource>(['meta', 'dashboards', 'users', 'roles', ...COMPANION_KIND_MODULES.flatMap((k) => k.reads ?? [])]),
];

/** The client with its reads recorded into `into` (answers passed on as they are). */
export function recordingClient(client: SupersetClient, into: Recording): SupersetClient {
  return overResources(client, (resource, method, args, call) =>
    call().then(
      (answer) => {
        into[recordingKey(resource, method, args)] = { answer };
        return answer;
      },
      (err: unknown) => {
        if (err instanceof SupersetNotFoundError) into[recordingKey(resource, method, args)] = { not_found: err.message };
        throw err;
      },
    ),
  );
}

/** A source answering from a recording: a read it does not hold, or held as a 404, is a SupersetNotFoundError. */
export function replayClient(recording: Recording): SupersetClient {
  return overResources({} as SupersetClient, async (resource, method, args) => {
    const key = recordingKey(resource, method, args);
    const hit = recording[key];
    if (hit && 'answer' in hit) return structuredClone(hit.answer);
    throw new SupersetNotFoundError(
      { method: 'GET', path: `/api/v1/(backup) ${key}`, upstreamStatus: 404 },
      hit ? hit.not_found : 'not in the backup',
      undefined,
    );
  });
}

type Call = (resource: string, method: string, args: unknown[], call: () => Promise<unknown>) => Promise<unknown>;

function overResources(client: SupersetClient, through: Call): SupersetClient {
  const resources = Object.fromEntries(
    READ_RESOURCES.map((resource) => {
      const target = (client as unknown as Record<string, Record<string, (...a: unknown[]) => Promise<unknown>> | undefined>)[resource];
      const proxy = new Proxy(
        {},
        {
          get:
            (_t, method: string) =>
            (...args: unknown[]) =>
              through(resource, method, args, () => target![method]!.apply(target, args)),
        },
      );
      return [resource, proxy];
    }),
  );
  return { ...resources } as unknown as SupersetClient;
}

/**
 * List reads every dashboard of an activity would make alike: a source's are kept under the
 * task's source snapshot (../caches.ts, renewed every minute); a target's are shared by the
 * comparisons before its imports, and forgotten (read again) once anything is written there
 * (./step.ts: an import, a companion written).
 */
export const LISTS: ReadonlySet<string> = new Set<string>(COMPANION_KIND_MODULES.flatMap((k) => k.lists ?? []));

interface Memo {
  client: SupersetClient;
  answers: Map<string, Promise<unknown>>;
}
const memos = new WeakMap<object, WeakMap<SupersetClient, Memo>>();

function memoOf(client: SupersetClient, activity: object): Memo {
  let mine = memos.get(activity);
  if (!mine) memos.set(activity, (mine = new WeakMap()));
  const hit = mine.get(client);
  if (hit) return hit;
  const answers = new Map<string, Promise<unknown>>();
  const memo = overResources(client, (resource, method, args, call) => {
    if (!LISTS.has(`${resource}.${method}`)) return call();
    const key = recordingKey(resource, method, args);
    let answer = answers.get(key);
    if (!answer) {
      const asked = call();
      answer = asked;
      // A 404 (a feature flag off, a release without the API) stays for the scope; another failure is asked again.
      asked.catch((err: unknown) => {
        if (!(err instanceof SupersetNotFoundError) && answers.get(key) === asked) answers.delete(key);
      });
      answers.set(key, asked);
    }
    return answer.then((a) => structuredClone(a));
  });
  const made = { client: memo, answers };
  mine.set(client, made);
  return made;
}

/** The client with its list reads remembered per scope (`activity`: its input object, or a task's source snapshot); every other call passed on. */
export function memoisedLists(client: SupersetClient, activity: object): SupersetClient {
  return memoOf(client, activity).client;
}

/** What the activity remembered of `client`'s lists, forgotten: the next read asks the environment. */
export function forgetLists(client: SupersetClient, activity: object): void {
  memos.get(activity)?.get(client)?.answers.clear();
}
