/**
 * Import rules: layers point one way. `npm test` runs this (npm run lint:imports) and fails on a
 * forbidden import or a cycle.
 *
 *   contracts/   types, schemas and pure functions shared by everyone; imports only contracts/
 *   lib/         generic building blocks (Superset client, crypto, bundles, embedded servers); imports nothing of the project
 *   db/          stores: one owner per table; imports lib/ and contracts/; the only importer of knex
 *   activities/  Temporal activities; imports db/, lib/, contracts/
 *   workflows/   deterministic workflow code; imports contracts/ and activities only as types
 *   worker/      composition root of the worker; imports activities/, db/, lib/, contracts/
 *   api/         HTTP routes and services; imports db/, lib/, contracts/
 *   client/      the typed HTTP client (generated types + openapi-fetch); imports nothing of the project
 *   cli/         the `switchyard` command; imports client/ and contracts/ only (it talks to the public API)
 *   web/         the web console (a browser app); imports client/ and contracts/ only, like cli/ (its .tsx, which
 *                this swc parser does not read, is checked by test/web/layers.test.ts)
 *   scripts/, bench/, test/ may import anything
 */
const layer = (name, allowed) => ({
  name: `${name}-imports`,
  severity: 'error',
  comment: `${name}/ may import only ${allowed.length ? allowed.join(', ') : 'itself'} of the project`,
  from: { path: `^${name}/` },
  to: {
    path: '^(contracts|lib|db|activities|workflows|worker|api|client|cli|web|scripts|bench|test)/',
    pathNot: [`^${name}/`, ...allowed.map((a) => `^${a}/`)],
  },
});

module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      severity: 'error',
      comment: 'a cycle ties modules together so neither can change alone',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    layer('contracts', []),
    layer('lib', []),
    layer('db', ['lib', 'contracts']),
    layer('activities', ['db', 'lib', 'contracts']),
    layer('worker', ['activities', 'db', 'lib', 'contracts']),
    layer('api', ['db', 'lib', 'contracts']),
    layer('client', []),
    layer('cli', ['client', 'contracts']),
    layer('web', ['client', 'contracts']),
    {
      name: 'workflows-imports',
      severity: 'error',
      comment: 'workflows/ run in the deterministic sandbox: contracts/ and, as types only, activities/',
      from: { path: '^workflows/' },
      to: { path: '^(lib|db|worker|api|scripts|bench|test)/' },
    },
    {
      // The type of createActivities, for proxyActivities. That it is `import type` is enforced by the
      // workflow bundle build (test global setup and the worker), which fails on any runtime import
      // of activity code (Node built-ins, database drivers).
      name: 'workflows-activities-index-only',
      severity: 'error',
      comment: 'workflows/ may import activities/ only through activities/index.ts, as a type',
      from: { path: '^workflows/' },
      to: { path: '^activities/', pathNot: '^activities/index[.]ts$' },
    },
    {
      name: 'workflows-no-node-builtins',
      severity: 'error',
      comment: 'workflow code must not use Node built-ins (determinism)',
      from: { path: '^workflows/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      // The stores are the only way to the database: api/ and worker/ get them from createStores
      // (db/stores.ts) and hand them on; a transaction spanning stores is Stores.transaction. No
      // exception for lib/embedded: it starts PostgreSQL but never queries it. (scripts/, bench/
      // and test/, which make throwaway databases, are not cruised.)
      name: 'knex-only-in-db',
      severity: 'error',
      comment: 'only db/ may import knex: everything else reaches the database through the stores (db/stores.ts)',
      from: { pathNot: '^db/' },
      to: { path: '(^|/)node_modules/knex/' },
    },
    {
      name: 'no-unresolvable',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    // TypeScript 7 has no JS compiler API for dependency-cruiser; swc (the Temporal bundler's) sees `import type`.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    // Packages are left out of the graph, but knex: the knex-only-in-db rule needs to see who imports it.
    exclude: { path: '(^|/)node_modules/(?!knex/)' },
  },
};
