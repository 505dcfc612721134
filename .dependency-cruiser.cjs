/**
 * Import rules: layers point one way. `npm test` runs this (npm run lint:imports) and fails on a
 * forbidden import or a cycle.
 *
 *   contracts/   types, schemas and pure functions shared by everyone; imports only contracts/
 *   lib/         generic building blocks (Superset client, crypto, bundles, embedded servers); imports nothing of the project
 *   db/          stores: one owner per table; imports lib/ and contracts/ (but not lib/superset: a store never
 *                talks to Superset); the only importer of knex
 *   domain/      the product's work over stores and Superset clients, one folder per domain (migration/,
 *                datasets/, failures/); imports db/, lib/, contracts/ and other domains. Each folder's index.ts
 *                is its front door: from outside the folder nothing else of it may be imported (tests, bench and
 *                scripts, which test internals, are not cruised)
 *   activities/  Temporal activities; imports domain/ (front doors), db/, lib/, contracts/
 *   workflows/   deterministic workflow code; imports contracts/ and activities only as types
 *   worker/      composition root of the worker; imports activities/, domain/ (front doors), db/, lib/, contracts/
 *   api/         HTTP routes and services; imports domain/ (front doors), db/, lib/, contracts/
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
    path: '^(contracts|lib|db|domain|activities|workflows|worker|api|client|cli|web|scripts|bench|test)/',
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
    layer('domain', ['db', 'lib', 'contracts']),
    layer('activities', ['domain', 'db', 'lib', 'contracts']),
    layer('worker', ['activities', 'domain', 'db', 'lib', 'contracts']),
    layer('api', ['domain', 'db', 'lib', 'contracts']),
    {
      // A domain is used through its index.ts only, so what it keeps inside can change without its users
      // changing (docs/layout.md, "Domains"). Inside one domain folder anything goes.
      name: 'domain-front-door',
      severity: 'error',
      comment: 'a domain is imported only through its front door, domain/<name>/index.ts',
      from: { pathNot: '^domain/' },
      to: { path: '^domain/[^/]+/.+', pathNot: '^domain/[^/]+/index[.]ts$' },
    },
    {
      // The same between domains: $1 is the importer's own domain folder, where deep imports are its own business.
      name: 'domain-front-door-between-domains',
      severity: 'error',
      comment: 'another domain is imported only through its front door, domain/<name>/index.ts',
      from: { path: '^domain/([^/]+)/' },
      to: { path: '^domain/[^/]+/.+', pathNot: ['^domain/[^/]+/index[.]ts$', '^domain/$1/'] },
    },
    {
      // A store keeps rows; what talks to Superset is a domain (the safe dataset writer went to domain/datasets/).
      name: 'db-no-superset',
      severity: 'error',
      comment: 'db/ holds stores only: it does not import the Superset client (lib/superset/)',
      from: { path: '^db/' },
      to: { path: '^lib/superset/' },
    },
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
