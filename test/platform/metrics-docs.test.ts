/**
 * The metric list people build dashboards from (README's "Operating it" and the table in
 * docs/observability.md) is the registry's: a metric renamed, added or given another label in
 * lib/telemetry/metrics.ts without the docs fails here, and so does a documented metric that does
 * not exist.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { metrics } from '../../lib/telemetry/metrics.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');

/** Registered name → label names (prom-client keeps both on each metric). */
function registered(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const m of Object.values(metrics)) {
    const { name, labelNames } = m as unknown as { name: string; labelNames: string[] };
    out.set(name, [...labelNames].sort());
  }
  return out;
}

/** The rows of docs/observability.md's "Switchyard's metrics" table: name → its labels column. */
function documentedTable(): Map<string, string[]> {
  const section = read('docs/observability.md').split("### Switchyard's metrics")[1]?.split('\n### ')[0] ?? '';
  const out = new Map<string, string[]>();
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    const names = [...(cells[1] ?? '').matchAll(/`(switchyard_[a-z_]+)`/g)].map((m) => m[1]);
    const labels = [...(cells[3] ?? '').matchAll(/`([a-z_]+)`/g)].map((m) => m[1]).sort();
    for (const n of names) out.set(n, labels);
  }
  return out;
}

describe('documented metrics', () => {
  it("docs/observability.md's table lists every registered metric with its labels, and nothing else", () => {
    const table = documentedTable();
    table.delete('switchyard_process_'); // prom-client's defaults, a family rather than a name
    table.delete('switchyard_nodejs_');
    expect(Object.fromEntries(table)).toEqual(Object.fromEntries(registered()));
  });

  it("README's list names exactly the registered metrics", () => {
    const readme = read('README.md').split('## Operating it')[1]?.split('\n## ')[0] ?? '';
    const named = [...new Set([...readme.matchAll(/`(switchyard_[a-z_]+)`/g)].map((m) => m[1]))].sort();
    expect(named).toEqual([...registered().keys()].sort());
  });
});
