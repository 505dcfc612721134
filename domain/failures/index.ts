/**
 * An item's failure in words a person can act on: the front door of domain/failures/, shared by
 * the migration engine and every item activity (backups, restores, git deploys, releases, dataset
 * launches, validation).
 */
export { failItem, itemFailure, type FailureContext } from './item-failure.ts';
