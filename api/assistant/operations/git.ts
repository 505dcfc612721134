/** A dashboard's repository: its status (read-only), a commit of the working copy, a deploy (a git_deploy task). */
import type { ParseResult } from '../../../lib/assistant/intent.ts';
import { OPERATION_TEXTS } from '../../../lib/assistant/operation-texts.ts';
import { AppError } from '../../../lib/errors.ts';
import { gitDeployInput } from '../../git/input.ts';
import { deployBody } from '../../git/schemas.ts';
import { Clarification, resolveDashboards, resolveEnvironment } from '../resolve.ts';
import { oneDashboard, requestBody } from './support.ts';
import { defineOperation, needs, startsTask, type OperationContext, type Plan } from './types.ts';

async function status({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const ds = await resolveDashboards(lang, app.supersets, where.id, e.dashboards!);
  const statuses = [];
  for (const d of ds) statuses.push({ ...(await app.git.status(where.id, d.id)), dashboard_id: d.id, title: d.title });
  return {
    kind: 'read',
    text: statuses.map((s) => `#${s.dashboard_id} ${s.title}: ${(s as { status?: string }).status ?? ''}`).join('\n'),
    data: { env_id: where.id, items: statuses, entities: { ...e, environment: where, dashboards: ds } },
    outcome: { env_id: where.id, dashboards: ds.map((d) => d.id) },
  };
}

async function commit({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const d = await oneDashboard(app, lang, where, e.dashboards!);
  return {
    kind: 'act',
    action: { type: 'git_commit', envId: where.id, dashboardId: d.id, message: e.message! },
    summary: OPERATION_TEXTS.commit[lang](d, where.name, e.message!),
    resolved: { ...e, environment: where, dashboards: [d] },
  };
}

async function deploy({ app, envs, principal }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const target = resolveEnvironment(lang, e.target_environment!, envs);
  const d = await oneDashboard(app, lang, where, e.dashboards!);
  const commitId = e.commit ?? 'HEAD';
  let prepared;
  try {
    prepared = await app.git.prepareDeploy(where.id, d.id, target.id, commitId);
  } catch (err) {
    // No repository, no such commit: a question to the caller, as the route's 404 / 400.
    if (err instanceof AppError && (err.status === 404 || err.status === 400)) throw new Clarification(err.message, { error: err.code });
    throw err;
  }
  const { input, params } = gitDeployInput(
    requestBody(lang, deployBody, { env_id: where.id, target_env_id: target.id, commit: commitId }),
    d.id,
    prepared,
    principal.userId,
  );
  return {
    kind: 'act',
    action: { type: 'task', kind: 'git_deploy', input, params },
    summary: OPERATION_TEXTS.deploy[lang](d, prepared.commit.slice(0, 10), target.name, prepared.protected),
    resolved: { ...e, environment: where, target_environment: target, dashboards: [d], commit: prepared.commit },
  };
}

/** "открой PR для дашборда Sales": the repository's current branch, pushed and opened; a write, so it waits for confirmation. */
async function openPullRequest({ app, envs }: OperationContext, { language: lang, intent }: ParseResult): Promise<Plan> {
  const e = intent.entities;
  const where = resolveEnvironment(lang, e.environment!, envs);
  const target = resolveEnvironment(lang, e.target_environment!, envs);
  const d = await oneDashboard(app, lang, where, e.dashboards!);
  let branch: string;
  try {
    branch = await (await app.git.repository(where.id, d.id)).wc.branch();
  } catch (err) {
    // No repository: a question to the caller, as the route's 404.
    if (err instanceof AppError && err.status === 404) throw new Clarification(err.message, { error: err.code });
    throw err;
  }
  const title = lang === 'ru' ? `Изменения дашборда ${d.title}` : `Changes to dashboard ${d.title}`;
  // The assistant has no request to take an origin from: the links are relative to this Switchyard.
  const linkBase = '';
  return {
    kind: 'act',
    action: { type: 'git_pull_request', envId: where.id, dashboardId: d.id, targetEnvId: target.id, branch, title, linkBase },
    summary: OPERATION_TEXTS.openPullRequest[lang](d, branch, target.name),
    resolved: { ...e, environment: where, target_environment: target, dashboards: [d] },
  };
}

export const gitStatus = defineOperation('git.status', { access: needs('git:READ'), plan: status });
// A commit is not a task: it runs through the git service, as the commit route does, under git:WRITE.
export const gitCommit = defineOperation('git.commit', { access: needs('git:WRITE'), plan: commit });
export const gitDeploy = defineOperation('git.deploy', { access: startsTask('git_deploy'), plan: deploy });
export const gitOpenPullRequest = defineOperation('git.open_pr', { access: needs('pull_requests:OPEN'), plan: openPullRequest });
