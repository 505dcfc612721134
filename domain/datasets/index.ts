/**
 * Writing datasets in Superset safely: the front door of domain/datasets/ for activities/ and
 * api/ (docs/layout.md). The stores of dataset changes and suggestions stay in db/datasets/; what
 * here writes to Superset uses them.
 */
export { undoChange, writeDataset } from './safe-write.ts';
export { acceptSuggestions } from './suggestion-decisions.ts';
