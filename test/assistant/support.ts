// Shared by the assistant's tests: a dataset review session seeded in the stores, without Superset.
import type { Knex } from 'knex';
import { ReviewFieldStore } from '../../db/dataset-review/fields.ts';
import { ReviewMappingStore } from '../../db/dataset-review/mappings.ts';
import { ReviewSessionStore } from '../../db/dataset-review/sessions.ts';

/** A session as intake would leave it: two imported filters with values, one unresolved field, a manual mapping value. */
export async function seedReviewSession(knex: Knex, ownerId: string, ownerName: string): Promise<string> {
  const s = await new ReviewSessionStore(knex).create({
    owner_id: ownerId,
    owner_username: ownerName,
    env_id: '00000000-0000-4000-8000-00000000e4e4',
    link: 'https://superset.example.com/superset/dashboard/p/abc/',
    link_kind: 'permalink',
    state: 'ready',
    title: 'Orders review',
    dashboard: { id: 7, title: 'Orders', slug: 'orders', url: null },
    dataset: {
      id: 12,
      table_name: 'orders_view',
      database_id: 1,
      schema: null,
      catalog: null,
      sql: 'select 1',
      template_params: {},
      kind: 'virtual',
      url: null,
    },
    candidate_datasets: [],
    charts: [],
    imported_filters: [
      {
        id: 'F-region',
        name: 'Region',
        filter_type: 'filter_select',
        column: 'region',
        dataset_id: 12,
        raw_value: ['EMEA', 'Atlantis'],
        normalized: [{ col: 'region', op: 'IN', val: ['EMEA', 'Atlantis'] }],
        value_source: 'permalink',
        column_in_dataset: true,
      },
      {
        id: 'F-product',
        name: 'Product',
        filter_type: 'filter_select',
        column: 'product',
        dataset_id: 12,
        raw_value: ['widget'],
        normalized: [{ col: 'product', op: 'IN', val: ['widget'] }],
        value_source: 'permalink',
        column_in_dataset: true,
      },
    ],
    template_variables: [{ name: 'region', kind: 'filter_values', default: null }],
    recovery_markers: [],
    dictionary_id: null,
    dictionary_version: null,
  });
  await knex.transaction(async (trx) => {
    const superset = { verbose_name: null, description: null, type: null };
    await new ReviewFieldStore(knex).replace(trx, s.id, [
      {
        kind: 'column',
        name: 'region',
        position: 0,
        label: null,
        description: null,
        provenance: 'unresolved',
        status: 'unresolved',
        source: null,
        candidates: [],
        superset,
      },
      {
        kind: 'column',
        name: 'units',
        position: 1,
        label: null,
        description: null,
        provenance: 'unresolved',
        status: 'unresolved',
        source: null,
        candidates: [],
        superset,
      },
      {
        kind: 'column',
        name: 'product',
        position: 2,
        label: 'Product',
        description: null,
        provenance: 'superset',
        status: 'proposed',
        source: null,
        candidates: [],
        superset,
      },
    ]);
    const mappings = new ReviewMappingStore(knex);
    await mappings.replace(trx, s.id, [
      { filter_id: 'F-region', variable: 'region', variable_kind: 'filter_values' },
      { filter_id: 'F-product', variable: null, variable_kind: null },
    ]);
    const product = (await mappings.list(s.id, trx)).find((m) => m.filter_id === 'F-product')!;
    await mappings.patch(trx, s.id, product.id, { value: ['secret-manual'] }, ownerId);
  });
  return s.id;
}
