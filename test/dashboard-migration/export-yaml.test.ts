import { strToU8, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { Bundle, BundleError } from '../../lib/bundles/bundle.ts';
import { parseExportYaml } from '../../lib/bundles/export-yaml.ts';

/**
 * An export's files are read on a fast path (js-yaml) that must answer exactly what `yaml`, the
 * reader before it, answers, and must refuse what `yaml` refuses for the same reason.
 */

/**
 * Written by PyYAML 6.0 (`safe_dump(d, sort_keys=False, allow_unicode=True)`, Superset 6.1's own
 * venv), as Superset writes an export: the strings YAML 1.1 would read otherwise are quoted, and
 * the rest is plain.
 */
const PYYAML = `slice_name: 'yes'
viz_type: echarts_timeseries_bar
description: null
certified_by: ''
cache_timeout: 0
labels:
- 'on'
- 'off'
- 'no'
- y
- N
- '~'
- 'null'
- 'true'
- '0b101'
- '0x1F'
- '+12'
- '012'
- '1_000'
- '1:20'
- '12:30:00'
- '2024-01-01'
- '.inf'
- '= '
- '<<'
- '#hash'
- 'a: b'
- '- x'
- '''q'''
- '"dq"'
- '  lead'
- 'trail  '
- 'multi

  line

  '
- "tab\\there"
- unicode ☺ 😀
- "\\abell"
- ''
numbers:
- 0
- -1
- 12345678901234
- 1.5
- -0.25
- 1.0e+20
- 1.0e-05
- .inf
- -.inf
- 3.0
flags:
- true
- false
when: 2024-01-02 03:04:05
day: 2024-01-02
params:
  adhoc_filters:
  - clause: WHERE
    comparator: No filter
    sqlExpression: a > 1 AND b = 'x'
  row_limit: 10000
  extra_form_data: {}
query_context: '{"queries": [{"columns": ["ds"], "row_limit": 10}]}'
long: 'word word word word word word word word word word word word word word word
  word word word word word word word word word word word word word word word word
  word word word word word word word word word '
uuid: c0ffee00-0000-4000-8000-000000000001
version: 1.0.0
`;

const refusal = (text: string) => {
  try {
    Bundle.fromZip(zipSync({ 'x/metadata.yaml': strToU8('version: 1.0.0\n'), 'x/charts/c_1.yaml': strToU8(text) }));
    return undefined;
  } catch (e) {
    return e;
  }
};

describe("an export's YAML", () => {
  it('reads what PyYAML writes exactly as the yaml library does', () => {
    const read = parseExportYaml(PYYAML) as Record<string, unknown>;
    expect(read).toEqual(parse(PYYAML));
    // What makes the sample worth comparing: YAML 1.1 words kept as strings, floats, a timestamp left a string.
    expect(read.slice_name).toBe('yes');
    expect((read.labels as unknown[]).slice(0, 3)).toEqual(['on', 'off', 'no']);
    expect(read.numbers).toEqual([0, -1, 12345678901234, 1.5, -0.25, 1e20, 1e-5, Infinity, -Infinity, 3]);
    expect(read.when).toBe('2024-01-02 03:04:05');
    expect(read.day).toBe('2024-01-02');
  });

  it('reads an alias as the yaml library does', () => {
    const text = 'base: &b {row_limit: 10, columns: [ds]}\nfirst: *b\nsecond: *b\nname: &n sales\nagain: *n\n';
    expect(parseExportYaml(text)).toEqual(parse(text));
    expect(parseExportYaml(text)).toMatchObject({ first: { row_limit: 10 }, again: 'sales' });
  });

  it('refuses an alias bomb with the yaml library’s own reason, before it expands', () => {
    // Nine levels of ten aliases each: 10^9 copies of "lol" if it were expanded (the test would not end).
    const levels = ['a0: &a0 [lol]'];
    for (let i = 1; i < 10; i++)
      levels.push(
        `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(', ')}]`,
      );
    const text = `${levels.join('\n')}\n`;
    const err = refusal(text);
    expect(err).toBeInstanceOf(BundleError);
    expect(err).toMatchObject({
      problem: 'unreadable',
      message: expect.stringMatching(/charts\/c_1\.yaml in the bundle is not YAML: .*alias/i),
    });
    expect(() => parse(text)).toThrow(/alias/i);
  });

  it('refuses a file that is not YAML with the same message as before', () => {
    const text = 'a: [1, 2\nb: }\n';
    let expected = '';
    try {
      parse(text);
    } catch (e) {
      expected = (e as Error).message;
    }
    expect(expected).not.toBe('');
    expect(refusal(text)).toMatchObject({ problem: 'unreadable', message: `charts/c_1.yaml in the bundle is not YAML: ${expected}` });
  });
});
