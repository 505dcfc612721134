// The web console is a client of the public API: web/src may import client/, contracts/ (types and
// pure functions) and packages, never the server's code. dependency-cruiser's swc parser does not
// read .tsx, so the rule is checked here.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const src = path.join(root, 'web', 'src');

function files(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? files(path.join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [path.join(dir, e.name)] : []));
}

describe('web/ imports', () => {
  it('reach only web/, client/, contracts/ and packages', () => {
    const offending: string[] = [];
    const all = files(src);
    expect(all.length).toBeGreaterThan(10);
    for (const file of all) {
      for (const m of fs
        .readFileSync(file, 'utf8')
        .matchAll(/(?:import|export)[^'"]*?from\s+['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]/g)) {
        const spec = m[1] ?? m[2];
        if (!spec.startsWith('.')) continue;
        const target = path.relative(root, path.resolve(path.dirname(file), spec));
        if (!/^(web|client|contracts)\//.test(target)) offending.push(`${path.relative(root, file)} → ${target}`);
      }
    }
    expect(offending).toEqual([]);
  });
});
