import type { TestProject } from 'vitest/node';
import { setupWith } from '../global-setup.ts';
import { MATRIX_SUPERSETS } from '../support/superset/test-instances.ts';

/** The default suite's infrastructure with one Superset per release of the matrix instead of a, b, c and d. */
export default function setup(project: TestProject) {
  return setupWith(project, MATRIX_SUPERSETS);
}
