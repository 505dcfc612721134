import { CORE_SCHEMA, load } from 'js-yaml';
import { parse } from 'yaml';
import { refusePlainMergeKey } from './merge-keys.ts';

/**
 * Reads one YAML file of a Superset export bundle.
 *
 * Superset writes these files with PyYAML (`safe_dump`), and a migration reads every export it
 * asks for: the source's, then the target's copy after the import. The `yaml` library builds a
 * whole document tree first. On a ten-dashboard export it spent about 18 ms per read: after
 * garbage collection, the largest part of Switchyard's own CPU in a migration (bench:migration's
 * CPU profile, docs/benchmarks.md note [ak]). js-yaml builds the values directly and takes about
 * 2 ms.
 *
 * js-yaml reads a file only while it stays on ground where both libraries agree:
 * - It uses the YAML 1.2 core schema. That is `yaml`'s default and how these files have always
 *   been read. PyYAML quotes every string that YAML 1.1 would read as something else (`yes`,
 *   `0b1`, `2024-01-01`), so the plain scalars it writes mean the same under both.
 * - It takes no alias (`maxAliases: 0`). PyYAML writes an alias only for an object used twice, and
 *   Superset's exports have none. An alias is how a small file expands into a huge value.
 *
 * A file js-yaml refuses is read by `yaml` exactly as before: the same value, the same error
 * message, and `yaml`'s own limit on aliases (`maxAliasCount`). That covers an alias, a tag such as
 * `!!binary`, or a syntax error. So there is one reader, and the fast path changes nothing a
 * caller can see.
 *
 * A plain merge key (`<<`) is refused first (./merge-keys.ts): neither library reads it as PyYAML does.
 */
export function parseExportYaml(text: string): unknown {
  refusePlainMergeKey(text);
  try {
    return load(text, { schema: CORE_SCHEMA, maxAliases: 0 });
  } catch {
    // expected: not YAML 1.1 as PyYAML writes it: read by the YAML 1.2 parser, which reports its own error.
    return parse(text);
  }
}
