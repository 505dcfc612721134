import proto from '@temporalio/proto';

const { temporal } = proto;
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';

const check = z.object({ ok: z.boolean(), detail: z.string() });
const readiness = z.object({
  status: z.enum(['ready', 'not_ready']),
  checks: z.object({ database: check, temporal: check, worker: check }),
});

async function timed<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);
}

export function healthRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/health',
      tag: 'Health',
      summary: 'Liveness: the API process answers',
      access: 'public',
      responses: { 200: { description: 'Alive', schema: z.object({ status: z.literal('ok') }) } },
      handler: () => ({ status: 'ok' as const }),
    }),
    defineRoute({
      method: 'get',
      path: '/api/ready',
      tag: 'Health',
      summary: 'Readiness: database, Temporal and a polling worker',
      access: 'public',
      responses: { 200: { description: 'Ready', schema: readiness }, 503: { description: 'Not ready', schema: readiness } },
      async handler(ctx) {
        const [database, temporalCheck, worker] = await Promise.all([
          timed(app.stores.database.ping(), 3000).then(
            () => ({ ok: true, detail: 'PostgreSQL answers' }),
            (e: Error) => ({ ok: false, detail: `PostgreSQL: ${e.message}` }),
          ),
          timed(app.temporal.workflowService.getSystemInfo({}), 3000).then(
            (info) => ({ ok: true, detail: `Temporal ${info.serverVersion || ''} answers`.replace('  ', ' ') }),
            (e: Error) => ({ ok: false, detail: `Temporal: ${e.message}` }),
          ),
          timed(
            app.temporal.workflowService.describeTaskQueue({
              namespace: app.config.TEMPORAL_NAMESPACE,
              taskQueue: { name: app.config.TEMPORAL_TASK_QUEUE, kind: temporal.api.enums.v1.TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
              taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
            }),
            3000,
          ).then(
            (r) => {
              const n = r.pollers?.length ?? 0;
              return n > 0
                ? { ok: true, detail: `${n} worker poller(s) on task queue ${app.config.TEMPORAL_TASK_QUEUE}` }
                : { ok: false, detail: `no worker polls task queue ${app.config.TEMPORAL_TASK_QUEUE}` };
            },
            (e: Error) => ({ ok: false, detail: `worker: ${e.message}` }),
          ),
        ]);
        const ready = database.ok && temporalCheck.ok && worker.ok;
        ctx.status = ready ? 200 : 503;
        ctx.body = { status: ready ? 'ready' : 'not_ready', checks: { database, temporal: temporalCheck, worker } };
      },
    }),
  ];
}
