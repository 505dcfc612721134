/**
 * The companion kinds' registry (domain/migration/companions/kinds.ts) and what is derived from
 * it: the kinds in the contract's order, and the client resources a recording answers and the
 * list reads an activity shares, each what they were when they were lists of their own; and the
 * contract's traits (default mode, label) of every kind.
 */
import { describe, expect, it } from 'vitest';
import { COMPANION_KIND_TRAITS, COMPANION_KINDS, DEFAULT_COMPANION_MODES } from '../../contracts/companions.ts';
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

  it('gives every kind a default mode and a label in both languages', () => {
    expect(Object.keys(DEFAULT_COMPANION_MODES)).toEqual([...COMPANION_KINDS]);
    for (const k of COMPANION_KINDS) {
      expect(DEFAULT_COMPANION_MODES[k]).toBe(COMPANION_KIND_TRAITS[k].mode);
      expect(COMPANION_KIND_TRAITS[k].label.en).toMatch(/^[A-Z]/);
      expect(COMPANION_KIND_TRAITS[k].label.ru).toMatch(/^[А-ЯЁ]/);
    }
  });
});
