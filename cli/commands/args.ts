import { InvalidArgumentError } from 'commander';
import { COMPANION_KINDS, COMPANION_MODES, type CompanionKindName, type CompanionMode } from '../../contracts/companions.ts';

/** `1,2,3` (or repeated) into positive integers; anything else is a usage error (exit 3). */
export function idList(value: string, previous: number[] = []): number[] {
  const ids = value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
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

/** `reports=copy` (repeatable): a companion kind's mode for a migration. */
export function companionMode(value: string, previous: Partial<Record<CompanionKindName, CompanionMode>> = {}) {
  const [kind, mode] = value.split('=').map((s) => s.trim());
  if (!(COMPANION_KINDS as readonly string[]).includes(kind ?? '') || !(COMPANION_MODES as readonly string[]).includes(mode ?? '')) {
    throw new InvalidArgumentError(
      `expected <kind>=<mode>, kind one of ${COMPANION_KINDS.join(', ')}, mode one of ${COMPANION_MODES.join(', ')}`,
    );
  }
  return { ...previous, [kind as CompanionKindName]: mode as CompanionMode };
}
