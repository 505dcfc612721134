/**
 * Command-line flags generated from the OpenAPI document's request schemas (client/openapi.json,
 * read at run time), so a new option of the API appears on the command line without hand work:
 * each top-level property becomes a `--kebab-case` flag; booleans are switches (`--no-…` when
 * the default is true), enums take one of their values, numbers are parsed, objects and arrays
 * take JSON.
 */
import fs from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  default?: unknown;
  description?: string;
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
}

const DOC = new URL('../client/openapi.json', import.meta.url);

/**
 * The JSON request schema of one operation. The document is generated (gitignored; `npm install`
 * and `npm run gen:client` write it): without it the CLI still runs, with the hand-made flags only.
 */
export function requestSchema(method: string, path: string): JsonSchema {
  if (!fs.existsSync(DOC)) return { properties: {} };
  const doc = JSON.parse(fs.readFileSync(DOC, 'utf8')) as {
    paths: Record<string, Record<string, { requestBody?: { content?: Record<string, { schema?: JsonSchema }> } }>>;
  };
  const schema = doc.paths[path]?.[method]?.requestBody?.content?.['application/json']?.schema;
  if (!schema?.properties) throw new Error(`the OpenAPI document has no JSON request schema for ${method.toUpperCase()} ${path}`);
  return schema;
}

const kebab = (name: string) => name.replace(/_/g, '-');
const typeOf = (s: JsonSchema) =>
  [s.type ?? s.anyOf?.map((a) => a.type)].flat().filter((t): t is string => typeof t === 'string' && t !== 'null')[0];

function parseJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected JSON');
  }
}

function parseNumber(integer: boolean) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || (integer && !Number.isInteger(n)))
      throw new InvalidArgumentError(`expected ${integer ? 'an integer' : 'a number'}`);
    return n;
  };
}

/** Adds a flag per property not in `skip`; returns the property names added (to read them back with `bodyFrom`). */
export function addRequestOptions(cmd: Command, schema: JsonSchema, skip: string[]): string[] {
  const added: string[] = [];
  for (const [name, prop] of Object.entries(schema.properties ?? {})) {
    if (skip.includes(name)) continue;
    const flag = kebab(name);
    const text = (prop.description ?? name).split('\n')[0]!.slice(0, 200);
    const type = typeOf(prop);
    const values = prop.enum ?? prop.anyOf?.flatMap((a) => a.enum ?? []);
    let opt: Option;
    if (type === 'boolean') opt = prop.default === true ? new Option(`--no-${flag}`, text) : new Option(`--${flag}`, text);
    else if (values?.length) opt = new Option(`--${flag} <value>`, text).choices(values.map(String));
    else if (type === 'integer' || type === 'number') opt = new Option(`--${flag} <n>`, text).argParser(parseNumber(type === 'integer'));
    else if (type === 'object' || type === 'array') opt = new Option(`--${flag} <json>`, `${text} (JSON)`).argParser(parseJson);
    else opt = new Option(`--${flag} <value>`, text);
    cmd.addOption(opt);
    added.push(name);
  }
  return added;
}

/** The request properties the person typed (commander's defaults are left to the API's). */
export function bodyFrom(cmd: Command, names: string[]): Record<string, unknown> {
  const opts = cmd.opts<Record<string, unknown>>();
  const body: Record<string, unknown> = {};
  for (const name of names) {
    const key = kebab(name).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
    if (cmd.getOptionValueSource(key) === 'cli') body[name] = opts[key];
  }
  return body;
}
