/**
 * A new version of a semantic dictionary (CSV or XLSX upload), and what it does to the sessions
 * ranked against that dictionary: unlocked fields are reranked and may need review, locked ones
 * keep their values.
 */
import { createHash } from 'node:crypto';
import type { SemanticDictionaryStore } from '../../db/dataset-review/dictionaries.ts';
import type { ReviewFieldStore } from '../../db/dataset-review/fields.ts';
import type { ReviewSessionStore } from '../../db/dataset-review/sessions.ts';
import type { Stores } from '../../db/stores.ts';
import { parseDictionaryCsv } from '../../lib/dictionary/csv.ts';
import { parseDictionaryWorkbook } from '../../lib/dictionary/xlsx.ts';
import type { Principal } from '../auth/principal.ts';
import type { UploadedFile } from '../http/routes.ts';
import { actor, versionOut } from './answers.ts';
import { rerank } from './fields.ts';

export async function addDictionaryVersion(
  deps: {
    stores: Pick<Stores, 'transaction'>;
    dictionaries: SemanticDictionaryStore;
    sessions: ReviewSessionStore;
    fields: ReviewFieldStore;
  },
  p: Principal,
  dictionaryId: string,
  file: UploadedFile,
) {
  const { dictionaries, sessions, fields } = deps;
  await dictionaries.get(dictionaryId);
  const isXlsx = file.bytes.subarray(0, 2).toString('latin1') === 'PK';
  const entries = isXlsx ? (await parseDictionaryWorkbook(file.bytes)).entries : await parseDictionaryCsv(file.bytes);
  return deps.stores.transaction(async (trx) => {
    const v = await dictionaries.addVersion(trx, dictionaryId, {
      filename: file.filename ? file.filename.slice(0, 255) : null,
      format: isXlsx ? 'xlsx' : 'csv',
      sha256: createHash('sha256').update(file.bytes).digest('hex'),
      entries,
      by: actor(p),
    });
    // Sessions ranked against this dictionary: unlocked fields need review, locked ones keep their values.
    let updated = 0;
    let reviewable = 0;
    for (const s of await sessions.usingDictionary(dictionaryId, trx)) {
      for (const f of await fields.list(s.id, trx)) {
        const r = rerank(f, { id: dictionaryId, version: v.version, entries }, s.dataset?.table_name ?? null);
        await fields.update(trx, s.id, f.id, r, { id: null, username: `dictionary v${v.version}` });
        if (r.status) reviewable++;
      }
      await sessions.markDictionaryVersion(s.id, v.version, trx);
      updated++;
    }
    return { ...versionOut(v), sessions_updated: updated, fields_needing_review: reviewable };
  });
}
