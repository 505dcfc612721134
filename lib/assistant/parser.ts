/**
 * The assistant's parser: Russian or English command text → an intent, by rules and the lexicon
 * (lexicon/keywords.json), never by a language model, so the same text and the same known
 * environments always give the same intent.
 *
 * Steps: tokenise (quoted names kept whole); mark what each token is (marks.ts: the caller's
 * environments, lexicon phrases by Snowball stem, fillers, prepositions, numbers, task ids and
 * commits, then keywords with one wrong letter); the language and the operation from the marks
 * (classify.ts); the entities as the operation needs them (entities.ts); and from the operation
 * table (operations.ts) what is still missing and how risky it is.
 */
import { classify, languageOf, type Reading } from './classify.ts';
import { readEntities } from './entities.ts';
import type { MissingParameter, ParseContext, ParseResult } from './intent.ts';
import { markTokens, type Sentence } from './marks.ts';
import { confirms, missingFor, operationKey, riskOf } from './operations.ts';
import { tokenise } from './tokenise.ts';

export type {
  Domain,
  Entities,
  Intent,
  KnownEnvironment,
  Language,
  MissingParameter,
  ObjectRef,
  Operation,
  ParseContext,
  ParseResult,
  RiskLevel,
} from './intent.ts';

const MAX_TEXT = 4000;

export function parseCommand(text: string, context: ParseContext = {}): ParseResult {
  const tokens = tokenise(text.slice(0, MAX_TEXT));
  const sentence: Sentence = { text, tokens, marks: tokens.map(() => undefined) };
  const corrections = markTokens(sentence, context.environments ?? []);
  const language = languageOf(sentence);
  const reading = classify(sentence);
  const { entities, operation } = readEntities(sentence, reading, language);
  const key = operationKey(reading.domain, operation);
  const missing = missingFor(key, entities);
  const risk = riskOf(key, entities);
  return {
    intent: {
      domain: reading.domain,
      operation,
      entities,
      confidence: confidenceOf(operation === 'unknown', reading, missing),
      risk_level: risk,
      requires_confirmation: confirms(risk),
    },
    language,
    missing,
    corrections,
  };
}

/** 1 for a clear command; less for corrected keywords, an operation inferred without a verb, or something missing; 0 for unknown. */
function confidenceOf(unknown: boolean, reading: Reading, missing: MissingParameter[]): number {
  if (unknown) return 0;
  return Math.max(0.5, Math.round((1 - 0.1 * reading.typos - (reading.inferred ? 0.15 : 0) - (missing.length ? 0.1 : 0)) * 100) / 100);
}
