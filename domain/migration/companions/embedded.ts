/**
 * The dashboard's embedded configuration: the uuid a host app's embedding SDK addresses and the
 * domains allowed to frame it. No export carries it, so without this the target dashboard is not
 * embeddable. Copying creates or updates it in the target with `allowed_domains` passed through
 * the pair's text rules (dev's host app → prod's); Superset assigns the target its own uuid, which
 * the item lists beside the source's so host apps can be pointed at it. An empty list means "any
 * domain" to Superset, so a source's empty list never replaces a target's non-empty one unless
 * the request says `companions.embedded_any_domain`: the target's list is kept and named.
 */
import type { CompanionItem } from '../../../contracts/companions.ts';
import type { EnvRule } from '../../../contracts/env-rules.ts';
import { textReplacer } from '../../../lib/bundles/env-rules.ts';
import { attempt, item, type CompanionKind, type KindResult } from './kind.ts';
import type { EmbeddedConfig } from '../../../lib/superset/resources/embedded.ts';
import { answer, sorted, type CompanionDocuments } from './kind-documents.ts';

/** The source's allowed domains as the target should have them: each through the pair's text rules, in order. */
export function mapDomains(domains: readonly string[], rules: readonly EnvRule[]): string[] {
  const replacers = rules.filter((r) => r.kind === 'text').map((r) => textReplacer(r));
  return domains.map((d) => {
    let out = d;
    for (const replace of replacers) out = replace(out).text;
    // A URL rule renders the link's path: `https://app.example.com` stays without a trailing slash.
    if (out !== d && !d.endsWith('/') && out.endsWith('/') && URL.canParse(out) && new URL(out).pathname === '/') out = out.slice(0, -1);
    return out;
  });
}

const sameSet = (a: readonly string[], b: readonly string[]) =>
  a.length === b.length && [...a].sort().join('\n') === [...b].sort().join('\n');

/** `companions/embedded/<uuid>.yaml`: the dashboard's embedded configuration (allowed domains). */
const embeddedDocuments: CompanionDocuments<Pick<EmbeddedConfig, 'uuid' | 'allowed_domains'>> = {
  write({ recording, dashboardId }) {
    const e = answer<EmbeddedConfig | null>(recording, 'embedded', 'get', dashboardId);
    return e ? [[e.uuid, { uuid: e.uuid, allowed_domains: sorted(e.allowed_domains) }]] : [];
  },
  replay(docs, x) {
    x.set('embedded', 'get', [x.dashboard.id], docs[0] ?? null);
  },
};

export const embedded: CompanionKind<'embedded'> = {
  kind: 'embedded',
  documents: embeddedDocuments,
  reads: ['embedded'],
  async run(ctx, write): Promise<KindResult> {
    const src = await ctx.sourceEmbedded();
    if (!src) return { items: [] };
    const wanted = mapDomains(src.allowed_domains, ctx.envRules);
    const tgt = await ctx.targetView();
    const there = tgt ? await ctx.target.embedded.get(tgt.dashboard.id) : null;
    const action = !there ? 'create' : sameSet(there.allowed_domains, wanted) ? 'unchanged' : 'update';
    const i = item('embedded', action, {
      source_uuid: src.uuid,
      target_uuid: there?.uuid ?? null,
      note: `allowed_domains: ${wanted.length ? wanted.join(', ') : '(any)'}`,
      ...(action === 'update' ? { fields: ['allowed_domains'] } : {}),
    });
    // "Any domain" over a target's own list opens the dashboard to every site: only on request.
    const opens = action === 'update' && !wanted.length && !ctx.embeddedAnyDomain;
    if (opens) keptTargetList(i, there!.allowed_domains);
    if (write && action !== 'unchanged' && tgt && !opens) {
      await attempt([i], async () => {
        i.target_uuid = (await ctx.target.embedded.set(tgt.dashboard.id, wanted)).uuid;
      });
    }
    return { items: [i] };
  },
};

function keptTargetList(i: CompanionItem, kept: readonly string[]): void {
  i.note = `the source allows any domain (an empty allowed_domains); the target's own list is kept: ${kept.join(', ')}`;
  i.next_action = {
    action: 'allow_any_domain',
    description:
      "Leave the target's allowed domains as they are, or migrate again with companions.embedded_any_domain true to let any site embed the dashboard in the target",
  };
}
