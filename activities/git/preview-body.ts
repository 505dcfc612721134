/**
 * The body Switchyard writes into a pull request: the dry-run deploy of its head commit into the
 * target (objects created, updated, unchanged; companions), the verdicts of its charts where the
 * branch was synced from, and with the browser check the screenshots, each with when it was made
 * and a link to the task. Markdown, which Gitea, GitHub and GitLab all render.
 */
import type { CompanionKindReport } from '../../contracts/companions.ts';
import { PREVIEW_BODY_MARKER, type GitDeployItem } from '../../contracts/git.ts';
import type { ObjectPlan, Verification } from '../../contracts/migration.ts';

export interface PreviewFacts {
  commit: string;
  targetName: string;
  sourceName: string;
  dashboardId: number;
  taskUrl: string;
  /** Turns a screenshot id into its link. */
  screenshotUrl: (id: string) => string;
  plannedAt: string;
  plan: GitDeployItem;
  verification: Verification | null;
  verifiedAt: string | null;
}

const BODY_MARKER = PREVIEW_BODY_MARKER;

const cell = (v: unknown) =>
  String(v ?? '')
    .replace(/\|/g, '\\|')
    .replace(/\r?\n/g, ' ')
    .slice(0, 200);

function objectsSection(objects: ObjectPlan[]): string[] {
  if (!objects.length) return ['_The plan lists no objects._'];
  const count = (a: string) => objects.filter((o) => o.action === a).length;
  const lines = [
    `**${count('create')} created, ${count('update')} updated, ${count('unchanged')} unchanged${count('reuse') ? `, ${count('reuse')} reused` : ''}**`,
    '',
    '| Action | Kind | Name | Changed fields |',
    '|---|---|---|---|',
  ];
  for (const o of objects)
    lines.push(`| ${o.action} | ${o.kind} | ${cell(o.name)} | ${cell((o.differences ?? []).map((d) => d.field).join(', '))} |`);
  return lines;
}

function companionsSection(reports: CompanionKindReport[] | undefined, note: string | undefined): string[] {
  if (note) return [`_${cell(note)}_`];
  if (!reports?.length) return ['_No companions compared._'];
  const lines = ['| Kind | Mode | Name | Action |', '|---|---|---|---|'];
  for (const r of reports) {
    if (!r.available) lines.push(`| ${r.kind} | ${r.mode} | — | not compared: ${cell(r.unavailable)} |`);
    else if (!r.items.length) lines.push(`| ${r.kind} | ${r.mode} | — | nothing to compare |`);
    for (const i of r.available ? r.items : [])
      lines.push(`| ${r.kind} | ${r.mode} | ${cell(i.on ? `${i.name} (${i.on})` : i.name)} | ${i.action} |`);
  }
  return lines;
}

function verificationSection(f: PreviewFacts): string[] {
  const v = f.verification;
  if (!v) return ['_Not verified: the plan did not get that far._'];
  const passed = v.charts.filter((c) => c.ok).length;
  const lines = [
    `Dashboard ${f.dashboardId} as **${cell(f.sourceName)}** holds it (the environment the branch was synced from), checked at ${f.verifiedAt}: ` +
      `${v.charts_linked}/${v.charts_expected} charts linked, ${passed}/${v.charts.length} chart queries pass. ` +
      'A dry run imports nothing, so the target itself is verified by the deploy on merge.',
    '',
    '| Chart | Verdict | Detail |',
    '|---|---|---|',
  ];
  for (const c of v.charts)
    lines.push(
      `| ${cell(c.name)} | ${c.ok ? 'passes' : (c.classification ?? 'fails')} | ${cell(c.error ?? c.reason ?? (c.rows !== undefined ? `${c.rows} rows` : ''))} |`,
    );
  const b = v.browser;
  if (b) {
    lines.push('', `Browser check: **${b.verdict}**${b.reason ? ` (${cell(b.reason)})` : ''}.`);
    if (b.target_screenshot_id) lines.push(`![dashboard in ${cell(f.sourceName)}](${f.screenshotUrl(b.target_screenshot_id)})`);
  }
  return lines;
}

export function previewBody(description: string, f: PreviewFacts): string {
  const p = f.plan;
  const head = [
    BODY_MARKER,
    `## Switchyard preview: \`${f.commit.slice(0, 10)}\` into **${cell(f.targetName)}**`,
    '',
    `A dry-run deploy of this pull request's head commit into **${cell(f.targetName)}**, planned at ${f.plannedAt}; nothing was imported. [The preview task](${f.taskUrl}).`,
    '',
  ];
  const plan =
    p.outcome === 'succeeded'
      ? ['### What the deploy would do', '', ...objectsSection((p.objects ?? []) as ObjectPlan[])]
      : ['### The deploy would fail', '', `At step \`${p.step ?? '?'}\`: ${cell(p.error)}`];
  const body = [
    ...head,
    ...plan,
    '',
    '### Companions',
    '',
    ...companionsSection(p.companions, p.companions_note),
    '',
    '### Verification',
    '',
    ...verificationSection(f),
  ];
  return `${description.trim() ? `${description.trim()}\n\n` : ''}${body.join('\n')}\n`;
}

/** The person's own text of a body Switchyard wrote (what came before its marker). */
export function ownText(body: string): string {
  const at = body.indexOf(BODY_MARKER);
  return at < 0 ? body : body.slice(0, at);
}
