/**
 * A dataset's fields as Switchyard edits them: plain data, kept by the stores (db/datasets/) and
 * written to Superset by the safe dataset writer (lib/superset/dataset-edit.ts re-exports them).
 */

/** The fields Switchyard writes: a column's label and description, and the dataset's description. */
export type EditableField = 'verbose_name' | 'description';

/** Where a value lives: the dataset itself, or one of its columns (by name). */
export interface FieldRef {
  target: 'dataset' | 'column';
  column_name: string | null;
  field: EditableField;
}

export interface FieldEdit extends FieldRef {
  /** The new value; null clears the field. */
  value: string | null;
}

/** One field as it was and as it is to be (or was made). */
export interface FieldChange extends FieldRef {
  column_id: number | null;
  before: string | null;
  after: string | null;
}
