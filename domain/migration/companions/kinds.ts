/**
 * The companion kinds' registry: one import and one entry per kind (docs/layout.md, "Adding a
 * companion kind"). What works over every kind takes it from here, in the contract's order
 * (COMPANION_KINDS): the migration's step (./step.ts), the capture (./capture.ts), the documents'
 * writer and replay (./documents.ts, ./documents-replay.ts) and what a recording answers
 * (./recording.ts). The entries are keyed by name, so a kind the contract names without a module,
 * or a module the contract does not name, does not compile.
 */
import { COMPANION_KINDS, type CompanionKindName } from '../../../contracts/companions.ts';
import { annotationLayers } from './annotation-layers.ts';
import { certification } from './certification.ts';
import { cssTemplates } from './css-templates.ts';
import { embedded } from './embedded.ts';
import type { CompanionKind } from './kind.ts';
import { owners } from './owners.ts';
import { reports } from './reports.ts';
import { roles } from './roles.ts';
import { savedQueries } from './saved-queries.ts';
import { tags } from './tags.ts';
import { themes } from './themes.ts';

const BY_NAME = {
  owners,
  roles,
  tags,
  reports,
  annotation_layers: annotationLayers,
  css_templates: cssTemplates,
  saved_queries: savedQueries,
  certification,
  themes,
  embedded,
} satisfies { [K in CompanionKindName]: CompanionKind<K> };

/** Every kind, in the contract's order (the order reports and documents list them in). */
export const COMPANION_KIND_MODULES: readonly CompanionKind[] = COMPANION_KINDS.map((k) => BY_NAME[k]);
