/**
 * The assistant's migration card describes the companion defaults in words (lib/assistant cannot
 * import contracts/); the defaults themselves are decided once, in contracts/companions.ts. This
 * pins the pair: a changed default fails here until the card's sentence says the new one.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_COMPANION_MODES } from '../../contracts/companions.ts';
import { OPERATION_TEXTS } from '../../lib/assistant/operation-texts.ts';

describe("the assistant's words for the companion defaults", () => {
  it('match the defaults: roles strict, every other kind copied, reports paused', () => {
    expect(DEFAULT_COMPANION_MODES).toEqual({
      owners: 'copy',
      roles: 'strict',
      tags: 'copy',
      reports: 'copy',
      annotation_layers: 'copy',
      css_templates: 'copy',
      saved_queries: 'copy',
      certification: 'copy',
      themes: 'copy',
      embedded: 'copy',
    });
    const en = OPERATION_TEXTS.migrate.en([{ id: 1, title: 'Sales' }], 'dev', 'prod', '');
    const ru = OPERATION_TEXTS.migrate.ru([{ id: 1, title: 'Sales' }], 'dev', 'prod', '');
    for (const words of [
      'Owners',
      'tags',
      'alerts and reports (paused)',
      'annotation layers',
      'CSS templates',
      'saved queries',
      'certification',
      'theme',
      'embedded config',
      'roles differ',
    ])
      expect(en).toContain(words);
    for (const words of [
      'владельцы',
      'теги',
      'отчёты (на паузе)',
      'слои аннотаций',
      'шаблоны CSS',
      'сохранённые запросы',
      'сертификация',
      'тема',
      'встраивания',
      'роли дашборда',
    ])
      expect(ru).toContain(words);
  });
});
