/**
 * The companion kinds' registry (domain/migration/companions/kinds.ts) and what is derived from
 * it: the kinds in the contract's order, and the client resources a recording answers and the
 * list reads an activity shares, each what they were when they were lists of their own.
 */
import { describe, expect, it } from 'vitest';
import { COMPANION_KINDS } from '../../contracts/companions.ts';
import { COMPANION_KIND_MODULES } from '../../domain/migration/companions/kinds.ts';
import { LISTS, READ_RESOURCES } from '../../domain/migration/companions/recording.ts';

describe('the companion kinds registry', () => {
  it('holds every kind of the contract, in its order', () => {
    expect(COMPANION_KIND_MODULES.map((k) => k.kind)).toEqual([...COMPANION_KINDS]);
  });

  it('derives the resources a recording answers and the lists an activity shares', () => {
    expect([...READ_RESOURCES].sort()).toEqual(
      [
        'meta',
        'dashboards',
        'reports',
        'tags',
        'annotationLayers',
        'cssTemplates',
        'savedQueries',
        'users',
        'roles',
        'themes',
        'embedded',
        'databases',
      ].sort(),
    );
    expect([...LISTS].sort()).toEqual(
      ['reports.list', 'tags.list', 'annotationLayers.list', 'cssTemplates.list', 'savedQueries.list', 'themes.list'].sort(),
    );
  });
});
