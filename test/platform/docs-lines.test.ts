import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * No line over 400 characters in the README or docs/ (issue 35): prose wraps at about 100, and a
 * table cell too long for that becomes a list after its table. Long lines hid whole narratives in
 * one cell, unreadable in a diff and in review.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const MAX = 400;

function markdownFiles(): string[] {
  const docs = fs
    .readdirSync(path.join(ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => path.join('docs', f));
  return ['README.md', ...docs];
}

export function longLines(files: string[], read = (f: string) => fs.readFileSync(path.join(ROOT, f), 'utf8')): string[] {
  return files.flatMap((f) =>
    read(f)
      .split('\n')
      .flatMap((line, i) => (line.length > MAX ? [`${f}:${i + 1}: ${line.length} characters`] : [])),
  );
}

describe('documentation lines', () => {
  it(`has no line over ${MAX} characters in README.md and docs/`, () => {
    expect(longLines(markdownFiles())).toEqual([]);
  });

  it('names the file and line of a long one', () => {
    expect(longLines(['x.md'], () => `short\n${'a'.repeat(MAX + 1)}\n`)).toEqual([`x.md:2: ${MAX + 1} characters`]);
  });
});
