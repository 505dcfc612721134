import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { PROJECT_ROOT } from '../lib/config.ts';

/**
 * docs/helm-values.md: the chart's values as a table, each key's type and description from
 * values.schema.json and its default from values.yaml. `node scripts/helm-values-doc.ts` writes
 * it; `--check` fails when the committed page differs (helm:check runs that).
 */
export const CHART_DIR = path.join(PROJECT_ROOT, 'deploy', 'helm', 'switchyard');
export const VALUES_DOC = path.join(PROJECT_ROOT, 'docs', 'helm-values.md');

interface Schema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, Schema>;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
}

const cell = (text: string) => text.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function typeOf(s: Schema): string {
  const types = ([] as string[]).concat(s.type ?? 'any').join(' or ');
  const range = [s.minimum !== undefined ? `≥ ${s.minimum}` : '', s.maximum !== undefined ? `≤ ${s.maximum}` : '']
    .filter(Boolean)
    .join(', ');
  const choices = s.enum ? `: ${s.enum.filter((e) => typeof e === 'string' && e !== '').join(', ')}` : '';
  return `${types}${choices}${range ? ` (${range})` : ''}`;
}

function defaultOf(value: unknown): string {
  if (value === undefined) return '';
  return `\`${JSON.stringify(value)}\``;
}

/** One row per leaf key, depth first in the schema's order; an object without listed properties is a leaf. */
function rows(schema: Schema, values: unknown, prefix: string): string[] {
  const out: string[] = [];
  for (const [key, sub] of Object.entries(schema.properties ?? {})) {
    const name = prefix ? `${prefix}.${key}` : key;
    const value = values && typeof values === 'object' ? (values as Record<string, unknown>)[key] : undefined;
    if (sub.properties) {
      out.push(...rows(sub, value, name));
      continue;
    }
    out.push(`| \`${name}\` | ${cell(typeOf(sub))} | ${cell(defaultOf(value))} | ${cell(sub.description ?? '')} |`);
  }
  return out;
}

export function renderValuesDoc(chartDir = CHART_DIR): string {
  const schema = JSON.parse(fs.readFileSync(path.join(chartDir, 'values.schema.json'), 'utf8')) as Schema;
  const values = loadYaml(fs.readFileSync(path.join(chartDir, 'values.yaml'), 'utf8'));
  return [
    '# Helm chart values',
    '',
    '<!-- Made by `node scripts/helm-values-doc.ts` from deploy/helm/switchyard/values.schema.json and values.yaml; `npm run helm:check` fails when it is not current. -->',
    '',
    'The values of `deploy/helm/switchyard` ([Running Switchyard: Kubernetes](running.md#kubernetes)). The schema refuses',
    'a key it does not list, at every level, and a value of the wrong type or out of range; fields marked as',
    'Kubernetes fields are passed as they are and checked against the Kubernetes API schema when the chart is rendered.',
    '',
    '| Key | Type | Default | Description |',
    '|---|---|---|---|',
    ...rows(schema, values, ''),
    '',
  ].join('\n');
}

if (import.meta.main) {
  const text = renderValuesDoc();
  if (process.argv.includes('--check')) {
    const current = fs.existsSync(VALUES_DOC) ? fs.readFileSync(VALUES_DOC, 'utf8') : '';
    if (current !== text) {
      console.error(`${path.relative(PROJECT_ROOT, VALUES_DOC)} is not current: run node scripts/helm-values-doc.ts`);
      process.exit(1);
    }
  } else {
    fs.writeFileSync(VALUES_DOC, text);
    console.log(`wrote ${path.relative(PROJECT_ROOT, VALUES_DOC)}`);
  }
}
