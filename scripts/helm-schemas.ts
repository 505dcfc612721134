import fs from 'node:fs';
import path from 'node:path';
import { load as loadYaml } from 'js-yaml';

/**
 * Kubernetes API schemas in the layout kubeconform reads from a folder
 * (`<folder>/v<version>-standalone-strict/<kind>-<group>-<version>.json`), made from the OpenAPI
 * document a Kubernetes release ships (api/openapi-spec/swagger.json of its Go module) and from a
 * CustomResourceDefinition's openAPIV3Schema. Strict: an object that lists its properties refuses
 * any other, as the API server's strict field validation does.
 */

type Schema = { [key: string]: unknown };
interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const REF = '#/definitions/';

/** kubeconform's file name for a kind: `deployment-apps-v1`, `service-v1`, `networkpolicy-networking-v1`. */
export function schemaFileName(gvk: GroupVersionKind): string {
  const group = gvk.group ? `-${gvk.group.split('.')[0]!.toLowerCase()}` : '';
  return `${gvk.kind.toLowerCase()}${group}-${gvk.version.toLowerCase()}.json`;
}

export function versionFolder(root: string, kubernetesVersion: string): string {
  return path.join(root, `v${kubernetesVersion}-standalone-strict`);
}

/** The two string-typed definitions whose JSON may be a number as well. */
function widened(name: string, def: Schema): Schema {
  const { type: _type, format: _format, ...rest } = def;
  if (name === 'io.k8s.apimachinery.pkg.util.intstr.IntOrString') return { ...rest, oneOf: [{ type: 'string' }, { type: 'integer' }] };
  if (name === 'io.k8s.apimachinery.pkg.api.resource.Quantity') return { ...rest, oneOf: [{ type: 'string' }, { type: 'number' }] };
  return def;
}

/** A copy where every object with properties and no rule for others refuses unknown ones (CRDs' preserve-unknown-fields kept open). */
export function strict(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(strict);
  if (!node || typeof node !== 'object') return node;
  const out: Schema = {};
  for (const [k, v] of Object.entries(node as Schema)) {
    if (k === 'enum' || k === 'default' || k === 'example') out[k] = v;
    // Maps of name to schema: each value is a schema, the map itself is not (a field may be called `properties`).
    else if ((k === 'properties' || k === 'definitions' || k === 'patternProperties') && v && typeof v === 'object')
      out[k] = Object.fromEntries(Object.entries(v as Schema).map(([name, sub]) => [name, strict(sub)]));
    else out[k] = strict(v);
  }
  if (out.properties && out.additionalProperties === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true)
    out.additionalProperties = false;
  return out;
}

/** Names of the definitions `root` reaches through `$ref`s, itself included. */
function reachable(definitions: Record<string, Schema>, root: string): Set<string> {
  const seen = new Set<string>();
  const stack = [root];
  while (stack.length) {
    const name = stack.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    JSON.stringify(definitions[name], (key, value: unknown) => {
      if (key === '$ref' && typeof value === 'string' && value.startsWith(REF)) stack.push(value.slice(REF.length));
      return value;
    });
  }
  return seen;
}

/** One standalone schema file per kind of a Kubernetes release's swagger.json; returns how many were written. */
export function writeKubernetesSchemas(swaggerPath: string, folder: string): number {
  const swagger = JSON.parse(fs.readFileSync(swaggerPath, 'utf8')) as { definitions: Record<string, Schema> };
  const definitions = Object.fromEntries(Object.entries(swagger.definitions).map(([n, d]) => [n, widened(n, d)]));
  fs.mkdirSync(folder, { recursive: true });
  let written = 0;
  for (const [name, def] of Object.entries(definitions)) {
    const kinds = def['x-kubernetes-group-version-kind'] as GroupVersionKind[] | undefined;
    if (!kinds) continue;
    const used = [...reachable(definitions, name)].filter((n) => n !== name).sort();
    const standalone = strict({
      $schema: 'http://json-schema.org/draft-07/schema#',
      ...def,
      definitions: Object.fromEntries(used.map((n) => [n, definitions[n]])),
    });
    for (const gvk of kinds) {
      fs.writeFileSync(path.join(folder, schemaFileName(gvk)), JSON.stringify(standalone));
      written++;
    }
  }
  return written;
}

interface CustomResourceDefinition {
  spec: { group: string; names: { kind: string }; versions: { name: string; schema?: { openAPIV3Schema?: Schema } }[] };
}

/** One schema file per served version of a CustomResourceDefinition (a YAML file); returns how many were written. */
export function writeCrdSchemas(crdPath: string, folder: string): number {
  const crd = loadYaml(fs.readFileSync(crdPath, 'utf8')) as CustomResourceDefinition;
  fs.mkdirSync(folder, { recursive: true });
  let written = 0;
  for (const version of crd.spec.versions) {
    const schema = version.schema?.openAPIV3Schema;
    if (!schema) continue;
    const file = schemaFileName({ group: crd.spec.group, version: version.name, kind: crd.spec.names.kind });
    fs.writeFileSync(path.join(folder, file), JSON.stringify(strict({ $schema: 'http://json-schema.org/draft-07/schema#', ...schema })));
    written++;
  }
  return written;
}
