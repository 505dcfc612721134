// The parts of dataset tasks that need no Superset: workbook parsing (exceljs) and its limits,
// dictionary matching, the default catalog query and the query check, the dataset update builder
// and its verification, and the LLM call policy against a local OpenAI-protocol server.
import ExcelJS from 'exceljs';
import { zipSync } from 'fflate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogCommentsQuery } from '../../lib/dictionary/catalog-query.ts';
import { checkReadOnlyQuery } from '../../lib/sql/read-only.ts';
import { matchDictionary, type DictionaryEntry } from '../../lib/dictionary/entries.ts';
import { parseDictionaryWorkbook } from '../../lib/dictionary/xlsx.ts';
import { ValidationError } from '../../lib/errors.ts';
import { completeStructured, LlmError, type LlmPolicy } from '../../lib/llm/chat.ts';
import { docsMessages, docsSchema } from '../../lib/llm/dataset-docs.ts';
import { buildUpdate, datasetFingerprint, plannedChanges, unexpectedDifferences } from '../../lib/superset/dataset-edit.ts';
import type { DatasetDetail } from '../../lib/superset/types.ts';
import { startFakeLlm, type FakeLlm } from '../support/fake-llm.ts';

async function workbook(rows: unknown[][], sheet = 'Dictionary'): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const ws = wb.addWorksheet(sheet);
  for (const r of rows) ws.addRow(r);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('dictionary workbooks', () => {
  it('reads the header row (any case, aliases), skips blank rows and reads rich text and formulas as text', async () => {
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('Sheet A');
    ws.addRow([]);
    ws.addRow(['Column Name', 'Label', 'DESCRIPTION', 'table']);
    ws.addRow(['region', 'Region', 'Sales region', null]);
    ws.addRow([]);
    ws.addRow([
      ' units ',
      { richText: [{ text: 'Un' }, { text: 'its' }] },
      { formula: '"Units " & "sold"', result: 'Units sold' },
      'sales',
    ]);
    const parsed = await parseDictionaryWorkbook(Buffer.from(await wb.xlsx.writeBuffer()));
    expect(parsed.sheet).toBe('Sheet A');
    expect(parsed.entries).toEqual([
      { column_name: 'region', verbose_name: 'Region', description: 'Sales region', table_name: null },
      { column_name: 'units', verbose_name: 'Units', description: 'Units sold', table_name: 'sales' },
    ]);
  });

  it('refuses what is not a usable dictionary with a 400 naming the problem', async () => {
    expect((await refusal(parseDictionaryWorkbook(Buffer.from('not a zip at all')))).message).toMatch(/not an .xlsx workbook/);
    const notXlsx = await refusal(parseDictionaryWorkbook(Buffer.from(zipSync({ 'a.txt': new Uint8Array([1, 2, 3]) }))));
    expect(notXlsx.message).toMatch(/not an .xlsx workbook \(it has no xl\/workbook.xml\)/);
    expect((await refusal(parseDictionaryWorkbook(await workbook([['name', 'comment']])))).message).toMatch(
      /header row naming column_name/,
    );
    expect((await refusal(parseDictionaryWorkbook(await workbook([['column_name', 'description']])))).message).toMatch(/no entries/);
    const dup = await refusal(
      parseDictionaryWorkbook(
        await workbook([
          ['column_name', 'description'],
          ['a', 'x'],
          ['A', 'y'],
        ]),
      ),
    );
    expect(dup.message).toMatch(/row 3 column 'A' is already described in row 2/);
    const noName = await refusal(
      parseDictionaryWorkbook(
        await workbook([
          ['column_name', 'description'],
          [null, 'orphan'],
        ]),
      ),
    );
    expect(noName.message).toMatch(/no column_name/);
    const long = await refusal(
      parseDictionaryWorkbook(
        await workbook([
          ['column_name', 'verbose_name'],
          ['a', 'x'.repeat(1025)],
        ]),
      ),
    );
    expect(long.message).toMatch(/longer than 1024/);
    expect(
      (
        await refusal(
          parseDictionaryWorkbook(
            await workbook([
              ['column_name', 'description'],
              ['a', 'b'],
            ]),
            { sheet: 'Nope' },
          ),
        )
      ).message,
    ).toMatch(/no sheet named 'Nope'/);
  });

  it('refuses a workbook that would unpack beyond the limit before opening it', async () => {
    // 60 MB of zeros compresses to a few dozen KB.
    const bomb = Buffer.from(zipSync({ 'xl/worksheets/sheet1.xml': new Uint8Array(60 * 1024 * 1024) }, { level: 9 }));
    expect(bomb.length).toBeLessThan(1024 * 1024);
    expect((await refusal(parseDictionaryWorkbook(bomb))).message).toMatch(/would unpack to 60 MB/);
  });
});

describe('matching a dictionary', () => {
  const entries: DictionaryEntry[] = [
    { column_name: 'REGION ', verbose_name: 'Region', description: null, table_name: null },
    { column_name: 'region', verbose_name: 'Sales region', description: null, table_name: 'Sales' },
    { column_name: 'units', verbose_name: 'Units', description: 'Units sold', table_name: null },
    { column_name: 'ghost', verbose_name: 'Ghost', description: null, table_name: null },
    { column_name: 'other_only', verbose_name: 'X', description: null, table_name: 'customers' },
  ];

  it('matches by trimmed, case-insensitive name, prefers the entry for the table, and reports both ways', () => {
    const m = matchDictionary(entries, {
      table_name: 'sales',
      columns: [{ column_name: 'Region' }, { column_name: 'units' }, { column_name: 'ds' }],
    });
    expect(m.matches.map((x) => [x.column_name, x.entry.verbose_name])).toEqual([
      ['Region', 'Sales region'],
      ['units', 'Units'],
    ]);
    expect(m.unmatched_dataset).toEqual(['ds']);
    expect(m.unmatched_dictionary).toEqual(['ghost']);
  });
});

describe('dictionary queries', () => {
  it('reads column comments where the engine keeps them, quoting names', () => {
    expect(catalogCommentsQuery('postgresql', { schema: 'public', table_name: "o'rders" })).toContain(`to_regclass('"public"."o''rders"')`);
    expect(catalogCommentsQuery('mysql', { schema: null, table_name: 'orders' })).toContain('table_schema = DATABASE()');
    expect(catalogCommentsQuery('sqlite', { table_name: 'orders' })).toBeUndefined();
  });

  it('accepts one SELECT and refuses anything else (lib/sql/read-only.ts)', async () => {
    const refusal = async (sql: string, backend = 'postgresql') => {
      const v = await checkReadOnlyQuery(sql, backend);
      return v.ok ? undefined : v.reason;
    };
    expect(await refusal('SELECT column_name, description FROM dict -- comment;')).toBeUndefined();
    expect(await refusal("with d as (select 'delete' as x) select * from d;")).toBeUndefined();
    expect(await refusal('select created_at, updated_by from t')).toBeUndefined();
    expect(await refusal('DELETE FROM t')).toMatch(/SELECT/);
    expect(await refusal('SELECT 1; DROP TABLE t')).toMatch(/single statement/);
    expect(await refusal('WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x')).toMatch(/may only read/);
    expect(await refusal('/* hi */ update t set a = 1')).toMatch(/SELECT/);
    // The old hand-written check stripped `--` before it knew literals and let this through.
    expect(await refusal("SELECT 'a--' AS column_name; DELETE FROM sales", 'sqlite')).toMatch(/single statement/);
    // Switchyard's own catalog queries pass the same decider.
    expect(await refusal(catalogCommentsQuery('postgresql', { schema: 'public', table_name: "o'rders" })!)).toBeUndefined();
    expect(await refusal(catalogCommentsQuery('mysql', { schema: 'shop', table_name: 'orders' })!, 'mysql')).toBeUndefined();
  });
});

describe('dataset updates', () => {
  const detail = (): DatasetDetail => ({
    id: 7,
    table_name: 'sales',
    description: null,
    changed_on: '2026-11-22T23:06:30.392099',
    database: { id: 1, backend: 'sqlite' },
    owners: [{ id: 1 }],
    verbose_map: { region: 'region' },
    columns: [
      {
        id: 1,
        column_name: 'region',
        verbose_name: null,
        description: 'Kept',
        type: 'TEXT',
        changed_on: 'x',
        created_on: 'y',
        type_generic: 1,
        groupby: true,
      },
      {
        id: 2,
        column_name: 'units',
        verbose_name: null,
        description: null,
        type: 'INTEGER',
        changed_on: 'x',
        created_on: 'y',
        type_generic: 0,
        groupby: false,
      },
    ],
    metrics: [{ id: 3, metric_name: 'count', expression: 'COUNT(*)', verbose_name: 'Count', changed_on: 'x', created_on: 'y' }],
  });

  it('sends every column and metric with its id and only the changed fields, without read-only keys', () => {
    const d = detail();
    const changes = plannedChanges(d, [
      { target: 'column', column_name: 'units', field: 'verbose_name', value: 'Units' },
      { target: 'column', column_name: 'region', field: 'description', value: 'Kept' }, // no change
      { target: 'dataset', column_name: null, field: 'description', value: 'Daily sales' },
    ]);
    expect(changes.map((c) => [c.target, c.column_name, c.field, c.before, c.after])).toEqual([
      ['column', 'units', 'verbose_name', null, 'Units'],
      ['dataset', null, 'description', null, 'Daily sales'],
    ]);
    const body = buildUpdate(d, changes);
    expect(body.description).toBe('Daily sales');
    expect(body.columns).toEqual([
      { id: 1, column_name: 'region', verbose_name: null, description: 'Kept', type: 'TEXT', groupby: true },
      { id: 2, column_name: 'units', verbose_name: 'Units', description: null, type: 'INTEGER', groupby: false },
    ]);
    expect(body.metrics).toEqual([{ id: 3, metric_name: 'count', expression: 'COUNT(*)', verbose_name: 'Count' }]);
    expect(() => plannedChanges(d, [{ target: 'column', column_name: 'nope', field: 'description', value: 'x' }])).toThrow(
      /no column 'nope'/,
    );
  });

  it('proves a write changed only the intended fields, and names whatever else moved', () => {
    const before = detail();
    const changes = plannedChanges(before, [{ target: 'column', column_name: 'units', field: 'verbose_name', value: 'Units' }]);
    const after = detail();
    after.columns[1]!.verbose_name = 'Units';
    after.changed_on = 'later';
    after.verbose_map = { region: 'region', units: 'Units' };
    after.columns[1]!.changed_on = 'later';
    expect(unexpectedDifferences(before, after, changes)).toEqual([]);
    expect(datasetFingerprint(before)).not.toBe(datasetFingerprint(after));

    const moved = structuredClone(after);
    moved.columns[0]!.groupby = false;
    moved.metrics = [];
    moved.owners = [];
    expect(unexpectedDifferences(before, moved, changes)).toEqual([
      'dataset owners: [{"id":1}] → []',
      "column 'region' groupby: true → false",
      "metric 'count' (id 3) is gone",
    ]);
    const notLanded = detail();
    expect(unexpectedDifferences(before, notLanded, changes)).toEqual([
      `column 'units' verbose_name did not take the new value: "Units", it holds null`,
    ]);
  });

  it('fingerprints content, not timestamps', () => {
    const a = detail();
    const b = detail();
    b.changed_on = 'another time';
    b.columns[0]!.changed_on = 'another time';
    expect(datasetFingerprint(a)).toBe(datasetFingerprint(b));
    b.columns[0]!.description = 'Changed by a person';
    expect(datasetFingerprint(a)).not.toBe(datasetFingerprint(b));
  });
});

describe('LLM calls (local OpenAI-protocol server)', () => {
  let llm: FakeLlm;
  const KEY = 'sk-test-unit-0123456789';
  const fast: LlmPolicy = { maxRetries: 3, maxRetryAfterSeconds: 5, baseDelayMs: 20, maxDelayMs: 100 };
  const dataset = (name: string) => ({
    name,
    kind: 'physical' as const,
    database_backend: 'sqlite',
    schema: null,
    sql: null,
    description: null,
    columns: [
      { name: 'region', type: 'TEXT', is_temporal: false, expression: null, label: null, description: null },
      { name: 'units', type: 'INTEGER', is_temporal: false, expression: null, label: null, description: null },
    ],
    metrics: [],
  });
  const ask = (name: string, opts: { timeoutSeconds?: number; policy?: LlmPolicy; key?: string; language?: 'en' | 'ru' } = {}) => {
    const events: string[] = [];
    // The client's waits are recorded, not slept: what it waited for is exact, whatever the machine's load.
    const waits: number[] = [];
    const p = completeStructured(
      { baseUrl: llm.baseUrl, apiKey: opts.key ?? KEY, model: 'test-model', timeoutSeconds: opts.timeoutSeconds ?? 5 },
      docsMessages(dataset(name), opts.language ?? 'en'),
      docsSchema(['region', 'units']),
      opts.policy ?? fast,
      { onAttempt: (e) => events.push(e.outcome), sleep: async (ms) => void waits.push(ms) },
    );
    return { p, events, waits };
  };

  beforeAll(async () => {
    llm = await startFakeLlm({ apiKey: KEY });
  });
  afterAll(async () => {
    await llm?.close();
  });

  it('returns the structured answer with its tokens and the model that answered', async () => {
    const { p, events } = ask('plain');
    const r = await p;
    expect(r.value.dataset_description).toBe('Dataset plain: daily sales.');
    expect(r.value.columns.map((c) => c.column_name)).toEqual(['region', 'units']);
    expect(r.model).toBe('test-model-2026');
    expect(r.attempts).toBe(1);
    expect(r.usage.total_tokens).toBeGreaterThan(0);
    expect(events).toEqual(['answered']);
    const sent = llm.requests.at(-1)!;
    expect(sent.body.response_format.type).toBe('json_schema');
    expect(sent.body.response_format.json_schema.schema.properties.columns.items.properties.column_name.enum).toEqual(['region', 'units']);
  });

  it('answers in Russian when asked', async () => {
    const r = await ask('russian', { language: 'ru' }).p;
    expect(r.value.dataset_description).toBe('Набор данных russian: продажи по дням.');
  });

  it('waits as Retry-After asks on 429, backs off on 500, then succeeds', async () => {
    llm.behave('limited', 'rate_limit_once');
    llm.behave('broken', 'error_500_once');
    const limited = ask('limited');
    const r = await limited.p;
    expect(limited.waits).toEqual([1000]); // Retry-After: 1
    expect(r.attempts).toBe(2);
    expect(limited.events).toEqual(['rate_limited', 'answered']);
    const broken = ask('broken');
    expect((await broken.p).attempts).toBe(2);
    expect(broken.events).toEqual(['unavailable', 'answered']);
  });

  it('gives up on a Retry-After longer than allowed at once, and on 5xx after the retries', async () => {
    llm.behave('quota-exhausted', 'rate_limit_long');
    llm.behave('crashing', 'error_500_always');
    const quota = ask('quota-exhausted');
    const long = await quota.p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as LlmError,
    );
    expect(long).toBeInstanceOf(LlmError);
    expect(long.kind).toBe('rate_limited');
    expect(long.message).toMatch(/asked to wait 3600 s/);
    expect(long.attempts).toBe(1);
    // At once: no wait at all, rather than a wait shorter than some time on the wall clock.
    expect(quota.waits).toEqual([]);
    const broken = await ask('crashing').p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as LlmError,
    );
    expect(broken.kind).toBe('unavailable');
    expect(broken.attempts).toBe(4); // 1 + maxRetries
    expect(broken.status).toBe(500);
    expect(broken.providerMessage).toBe('The server had an error');
  });

  it('asks once more with the validation error when the answer is not valid, then gives up', async () => {
    llm.behave('garbled-once', 'malformed_once');
    llm.behave('garbled-always', 'malformed_always');
    llm.behave('wrong-column', 'unknown_column');
    const once = ask('garbled-once');
    const r = await once.p;
    expect(r.attempts).toBe(2);
    expect(once.events).toEqual(['invalid_answer', 'answered']);
    const followUp = llm.requests
      .filter((q) => q.dataset === 'garbled-once')
      .at(-1)!
      .body.messages.at(-1).content as string;
    expect(followUp).toMatch(/not valid JSON/);
    expect((await ask('wrong-column').p).attempts).toBe(2);
    const always = await ask('garbled-always').p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as LlmError,
    );
    expect(always.kind).toBe('invalid_answer');
    expect(always.attempts).toBe(2);
    expect(always.usage.total_tokens).toBeGreaterThan(0);
  });

  it('asks once more after a timeout, then gives up', async () => {
    llm.behave('sleepy-once', 'slow_once');
    llm.behave('sleepy-always', 'slow_always');
    // The fake never answers a sleepy request (it waits for the client to give up), so only those time out; the 5 s
    // deadline bounds the answered one against a hang, far above any run.
    const once = ask('sleepy-once', { timeoutSeconds: 5 });
    expect((await once.p).attempts).toBe(2);
    expect(once.events).toEqual(['timeout', 'answered']);
    const always = await ask('sleepy-always', { timeoutSeconds: 5 }).p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as LlmError,
    );
    expect(always.kind).toBe('timeout');
    expect(always.attempts).toBe(2);
  });

  it('does not retry a refusal (wrong key) and never puts the key in the error', async () => {
    const before = llm.requests.length;
    const err = await ask('plain', { key: 'sk-wrong-key-9999999999' }).p.then(
      () => {
        throw new Error('expected a failure');
      },
      (e: unknown) => e as LlmError,
    );
    expect(err.kind).toBe('refused');
    expect(err.status).toBe(401);
    expect(llm.requests.length - before).toBe(1);
    expect(JSON.stringify({ message: err.message, provider: err.providerMessage })).not.toContain('sk-wrong-key');
  });
});
