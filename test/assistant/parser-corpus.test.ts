// The assistant's parser against the corpus (test/assistant/corpus/*.json): each command must
// give its intent, and exactly its entities and missing parameters where the case lists them.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCommand, type KnownEnvironment } from '../../lib/assistant/parser.ts';

interface Case {
  text: string;
  domain: string;
  operation: string;
  entities?: Record<string, unknown>;
  missing?: string[];
  language?: 'ru' | 'en';
}

const DIR = join(import.meta.dirname, 'corpus');
const files = readdirSync(DIR).filter((f) => f.endsWith('.json'));
const corpora = files.map((f) => ({
  file: f,
  ...(JSON.parse(readFileSync(join(DIR, f), 'utf8')) as { environments: KnownEnvironment[]; cases: Case[] }),
}));

describe('assistant parser corpus', () => {
  it('holds at least 300 phrasings in Russian and English', () => {
    const all = corpora.flatMap((c) => c.cases);
    expect(all.length).toBeGreaterThanOrEqual(300);
    expect(all.filter((c) => /[а-яё]/i.test(c.text)).length).toBeGreaterThan(100);
    expect(all.filter((c) => !/[а-яё]/i.test(c.text)).length).toBeGreaterThan(100);
  });

  for (const corpus of corpora) {
    describe(corpus.file, () => {
      it.each(corpus.cases.map((c) => [c.text, c] as const))('%s', (_text, c) => {
        const r = parseCommand(c.text, { environments: corpus.environments });
        expect({ domain: r.intent.domain, operation: r.intent.operation }).toEqual({ domain: c.domain, operation: c.operation });
        if (c.entities) {
          const { verb: _verb, ...entities } = r.intent.entities;
          expect(entities).toEqual(c.entities);
        }
        if (c.missing) expect(r.missing).toEqual(c.missing);
        if (c.language) expect(r.language).toBe(c.language);
        // Every result carries the whole intent shape.
        expect(r.intent).toEqual(
          expect.objectContaining({
            confidence: expect.any(Number),
            risk_level: expect.any(String),
            requires_confirmation: expect.any(Boolean),
          }),
        );
      });
    });
  }

  it('gives the same intent for the same text every time', () => {
    const envs = corpora[0]!.environments;
    for (const c of corpora[0]!.cases.slice(0, 50))
      expect(parseCommand(c.text, { environments: envs })).toEqual(parseCommand(c.text, { environments: envs }));
  });

  it('asks for confirmation exactly for the risky operations', () => {
    const envs = corpora[0]!.environments;
    const risky = (t: string) => parseCommand(t, { environments: envs }).intent;
    expect(risky('перенеси дашборд 5 из dev в prod')).toMatchObject({ risk_level: 'high', requires_confirmation: true });
    expect(risky('пробный перенос дашборда 5 из dev в prod')).toMatchObject({ risk_level: 'low', requires_confirmation: false });
    expect(risky('сделай бэкап дашборда 5 в dev')).toMatchObject({ risk_level: 'medium', requires_confirmation: true });
    expect(risky('покажи дашборды в dev')).toMatchObject({ risk_level: 'safe', requires_confirmation: false });
    expect(risky('привет')).toMatchObject({ domain: 'unknown', operation: 'unknown', confidence: 0 });
    expect(risky('перинеси дашборд 5 из dev в prod').confidence).toBeLessThan(1);
  });
});
