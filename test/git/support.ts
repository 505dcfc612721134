import fs from 'node:fs';
import path from 'node:path';
import git from 'isomorphic-git';
import http from 'isomorphic-git/http/node';
import { inject } from 'vitest';
import type { GiteaInfo } from '../support/gitea/instance.ts';
import type { Harness } from '../support/harness.ts';
import { createSqliteDatabase, getDashboard, updateDashboard, type SupersetClient } from '../support/superset/fixtures.ts';
import { prefixedTables } from '../dashboard-migration/support.ts';

export { buildSource, client, registerEnvironment, waitTask } from '../dashboard-migration/support.ts';

/** The run's real Gitea, or null when SWITCHYARD_TEST_GITEA=off. */
export function gitea(): GiteaInfo | null {
  return inject('gitea');
}

export const enabled = () => inject('supersets') !== null && inject('gitea') !== null;

/**
 * What Gitea holds of a repository and what it logged lately, for a failure to explain itself (a
 * refusal such as "The target couldn't be found" says nothing of why): its branches as its API
 * lists them (the table a pull request is checked against; Gitea answers null for none) and the
 * tail of Gitea's own log.
 */
export async function giteaDiagnostics(repo: string): Promise<string> {
  const g = gitea()!;
  const r = await fetch(`${g.baseUrl}/api/v1/repos/${repo}/branches`, { headers: { authorization: `token ${g.token}` } });
  const branches = r.ok
    ? (((await r.json()) as Array<{ name: string; commit: { id: string } }> | null) ?? []).map(
        (b) => `${b.name}@${b.commit.id.slice(0, 10)}`,
      )
    : [];
  const log = path.join(g.workDir, 'log/gitea.log');
  const tail = fs.existsSync(log) ? fs.readFileSync(log, 'utf8').split('\n').slice(-40).join('\n') : '(no log)';
  return `gitea branches of ${repo} (HTTP ${r.status}): ${branches.join(', ') || 'none'}\ngitea.log, last lines:\n${tail}`;
}

/** Renames a dashboard in Superset (a change a person makes there). */
export async function renameDashboard(c: SupersetClient, id: number, title: string): Promise<void> {
  await updateDashboard(c, id, { dashboard_title: title });
}

export async function setIdentity(h: Harness, token: string, name: string, email: string): Promise<void> {
  const r = await h.request('PATCH', '/api/profile/preferences', { token, json: { git_username: name, git_email: email } });
  if (r.status !== 200) throw new Error(`preferences: ${r.status} ${r.text}`);
}

/** Creates a user with the given roles and signs them in. */
export async function userWith(h: Harness, username: string, roles: string[]): Promise<string> {
  const password = `pw-${username}-0123456789`;
  const r = await h.request('POST', '/api/admin/users', { token: h.adminToken, json: { username, password, roles } });
  if (r.status !== 201) throw new Error(`user ${username}: ${r.status} ${r.text}`);
  return h.login(username, password);
}

/**
 * A second person's clone of a repository on the Gitea (isomorphic-git against its smart HTTP,
 * the token through onAuth): how the tests make real conflicts.
 */
export class OtherClone {
  readonly dir: string;
  private readonly g: GiteaInfo;
  constructor(dir: string, g: GiteaInfo) {
    this.dir = dir;
    this.g = g;
  }
  private get auth() {
    return { onAuth: () => ({ username: this.g.username, password: this.g.token }) };
  }
  async clone(url: string): Promise<void> {
    fs.rmSync(this.dir, { recursive: true, force: true });
    await git.clone({ fs, http, dir: this.dir, url, singleBranch: true, ...this.auth });
  }
  async pull(): Promise<void> {
    await git.pull({ fs, http, dir: this.dir, singleBranch: true, author: { name: 'Other', email: 'other@example.com' }, ...this.auth });
  }
  async head(): Promise<string> {
    return git.resolveRef({ fs, dir: this.dir, ref: 'HEAD' });
  }
  read(file: string): string {
    return fs.readFileSync(path.join(this.dir, file), 'utf8');
  }
  async commitAndPush(file: string, content: string, message: string): Promise<string> {
    fs.writeFileSync(path.join(this.dir, file), content);
    await git.add({ fs, dir: this.dir, filepath: file });
    const oid = await git.commit({ fs, dir: this.dir, message, author: { name: 'Other', email: 'other@example.com' } });
    const r = await git.push({ fs, http, dir: this.dir, ...this.auth });
    if (!r.ok) throw new Error(`push: ${JSON.stringify(r)}`);
    return oid;
  }
}

/** A database in a target instance holding the same (prefixed) tables as the source fixture. */
export function targetDatabase(c: SupersetClient, prefix: string, dir: string): Promise<{ id: number; uuid?: string }> {
  return createSqliteDatabase(c, {
    name: `${prefix}_warehouse`,
    path: path.join(dir, `${prefix}-target.db`),
    tables: prefixedTables(prefix),
  });
}

export async function dashboardTitle(c: SupersetClient, idOrUuid: number | string): Promise<string | null> {
  try {
    const r = await getDashboard(c, idOrUuid);
    return String(r.result.dashboard_title);
  } catch {
    return null;
  }
}
