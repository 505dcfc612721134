import { InvalidArgumentError } from 'commander';

/** `1,2,3` (or repeated) into positive integers; anything else is a usage error (exit 3). */
export function idList(value: string, previous: number[] = []): number[] {
  const ids = value.split(',').map((s) => s.trim()).filter(Boolean);
  if (!ids.length || ids.some((s) => !/^[1-9][0-9]{0,9}$/.test(s))) throw new InvalidArgumentError('expected ids like 1,2,3');
  return [...previous, ...ids.map(Number)];
}

export function positiveInt(value: string): number {
  if (!/^[1-9][0-9]{0,9}$/.test(value)) throw new InvalidArgumentError('expected a positive integer');
  return Number(value);
}

/** `source_db_id:target_db_id`, repeatable. */
export function dbMapping(value: string, previous: Array<{ source_database_id: number; target_database_id: number }> = []) {
  const m = /^([1-9][0-9]{0,9}):([1-9][0-9]{0,9})$/.exec(value);
  if (!m) throw new InvalidArgumentError('expected <source database id>:<target database id>');
  return [...previous, { source_database_id: Number(m[1]), target_database_id: Number(m[2]) }];
}

export function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}
