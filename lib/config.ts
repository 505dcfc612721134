import { X509Certificate, createPrivateKey } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import proxyaddr from 'proxy-addr';
import { z } from 'zod';
import { configuredDestinationError, EgressPolicy, EgressPolicyError } from './egress/policy.ts';

/** Where the project lives; default data and tool folders hang off it. */
export const PROJECT_ROOT = path.resolve(import.meta.dirname, '..');

const port = z.coerce.number().int().min(1).max(65535);
const optionalString = z
  .string()
  .trim()
  .transform((v) => (v === '' ? undefined : v))
  .optional();

/** A port, or nothing when unset or empty (a feature that listens only when asked to). */
const optionalPort = optionalString.pipe(
  z.string().regex(/^\d+$/, 'must be a port number').transform(Number).pipe(z.number().int().min(1).max(65535)).optional(),
);

/** A comma-separated list, entries trimmed, empty ones dropped (unset: none). */
const commaList = z
  .string()
  .optional()
  .transform((v) =>
    (v ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );

/**
 * Comma-separated addresses, CIDR ranges or proxy-addr's names (loopback, linklocal,
 * uniquelocal) of the reverse proxies whose X-Forwarded-For is believed.
 */
const trustedProxies = commaList.superRefine((list, ctx) => {
  for (const entry of list) {
    try {
      proxyaddr.compile(entry);
    } catch (err) {
      ctx.addIssue({ code: 'custom', message: `'${entry}': ${(err as Error).message} (expected addresses or CIDRs, comma-separated)` });
    }
  }
});
/** The egress allow-list, each entry checked by the policy's own parser (a bad one stops the start). */
const allowedUpstreamHosts = commaList.superRefine((list, ctx) => {
  try {
    EgressPolicy.parse(list);
  } catch (err) {
    if (!(err instanceof EgressPolicyError)) throw err;
    ctx.addIssue({ code: 'custom', message: err.message });
  }
});
/** `true`/`false`/`1`/`0`; empty or absent leaves the choice to the code (undefined). */
const optionalBoolean = z
  .union([
    z.boolean(),
    z
      .string()
      .trim()
      .regex(/^(true|false|1|0|)$/i, 'must be true or false'),
  ])
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v === true || (typeof v === 'string' && /^(true|1)$/i.test(v))));

const schema = z.object({
  PORT: port.default(8080),
  HOST: z.string().default('127.0.0.1'),
  /** Peers whose X-Forwarded-For names the client; nobody else's is believed (default: none). */
  TRUSTED_PROXIES: trustedProxies,
  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  /**
   * The API applies pending migrations at start (default). `false` where a deployment runs
   * `node scripts/migrate.ts` once per release (the Helm chart's init step): the API then refuses
   * a database whose schema is behind instead of serving on it.
   */
  DATABASE_MIGRATE_AT_START: optionalBoolean.transform((v) => v ?? true),
  SWITCHYARD_DATA_DIR: z.string().default(path.join(PROJECT_ROOT, '.data')),
  EMBEDDED_POSTGRES_PORT: port.default(5488),
  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().default('default'),
  TEMPORAL_TASK_QUEUE: z.string().default('switchyard'),
  TEMPORAL_CLI: optionalString,
  TEMPORAL_PORT: port.default(7233),
  TEMPORAL_UI_PORT: port.default(8233),
  /** TLS to the Temporal frontend: on when any of the TLS variables or an API key is set, unless set to false. */
  TEMPORAL_TLS: optionalBoolean,
  /** PEM file paths: client certificate and key (mTLS), and the CA bundle that verifies the server. */
  TEMPORAL_TLS_CERT: optionalString,
  TEMPORAL_TLS_KEY: optionalString,
  TEMPORAL_TLS_CA: optionalString,
  /** Name checked against the server certificate (SNI), when it differs from TEMPORAL_ADDRESS's host. */
  TEMPORAL_TLS_SERVER_NAME: optionalString,
  /** Sent as `Authorization: Bearer …` on every Temporal call (Temporal Cloud, or an authorizing proxy). */
  TEMPORAL_API_KEY: optionalString,
  SWITCHYARD_SECRET_KEY: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  /** Keys replaced by SWITCHYARD_SECRET_KEY, comma-separated: still read (secrets, tokens) until the rotation ends. */
  SWITCHYARD_PREVIOUS_SECRET_KEYS: commaList.pipe(z.array(z.string().min(32, 'each key must be at least 32 characters'))),
  SWITCHYARD_ADMIN_USERNAME: optionalString,
  SWITCHYARD_ADMIN_PASSWORD: optionalString,
  OIDC_ISSUER: optionalString.pipe(z.url().optional()),
  OIDC_CLIENT_ID: optionalString,
  OIDC_CLIENT_SECRET: optionalString,
  OIDC_REDIRECT_URI: optionalString.pipe(z.url().optional()),
  OIDC_GROUPS_CLAIM: z.string().default('groups'),
  LLM_BASE_URL: optionalString.pipe(z.url().optional()),
  LLM_API_KEY: optionalString,
  LLM_MODEL: optionalString,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** `auto`: readable lines on a terminal, JSON otherwise; `json` or `pretty` to choose (docs/observability.md). */
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  /**
   * Prometheus metrics, each process on a listener of its own (never the API's): the API on
   * METRICS_PORT, a worker on WORKER_METRICS_PORT, the Temporal SDK's worker metrics (served by its
   * core runtime) on TEMPORAL_METRICS_PORT. Unset: off.
   */
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
  METRICS_PORT: optionalPort,
  WORKER_METRICS_PORT: optionalPort,
  TEMPORAL_METRICS_PORT: optionalPort,
  /** OpenTelemetry traces over OTLP/HTTP (the standard variables); unset: no tracing. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** Seconds a task row may stay PENDING before the reconciler (re)starts its workflow. */
  TEMPORAL_UI_URL: optionalString.pipe(z.url().optional()),
  TASK_RECONCILE_AFTER_SECONDS: z.coerce.number().int().min(1).default(15),
  /**
   * Items (dashboards) a long item-by-item task handles in one workflow run before it continues as
   * new under the same task id: bounds each run's history however many items the task has.
   */
  TASK_ITEMS_PER_RUN: z.coerce.number().int().min(1).max(1000).default(100),
  /**
   * Chart queries (chart-data, legacy explore) a worker's verifications send to one environment at
   * once, each environment on its own: Superset answers them on the few threads of the process that
   * also imports (docs/migration-batching.md).
   */
  VERIFY_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(4),
  /** Backups: a directory (default `<SWITCHYARD_DATA_DIR>/backups`), or an S3-compatible bucket when BACKUP_S3_BUCKET is set. */
  BACKUP_DIR: optionalString,
  BACKUP_S3_ENDPOINT: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  BACKUP_S3_BUCKET: optionalString,
  BACKUP_S3_REGION: z.string().trim().min(1).default('us-east-1'),
  BACKUP_S3_ACCESS_KEY_ID: optionalString,
  BACKUP_S3_SECRET_ACCESS_KEY: optionalString,
  BACKUP_S3_FORCE_PATH_STYLE: z
    .union([
      z.boolean(),
      z
        .string()
        .trim()
        .regex(/^(true|false|1|0|)$/i, 'must be true or false'),
    ])
    .transform((v) => v === true || (typeof v === 'string' && /^(true|1)$/i.test(v)))
    .default(false),
  /** Backups kept per dashboard and environment (newest first); older ones are pruned after each backup task. */
  BACKUP_RETENTION_COUNT: z.coerce.number().int().min(1).default(10),
  /** Optional: also prune backups older than this many days (the newest backup of a dashboard is always kept). */
  BACKUP_RETENTION_DAYS: z
    .union([z.number(), z.string()])
    .optional()
    .transform((v) => (v === undefined || String(v).trim() === '' ? undefined : Number(v)))
    .pipe(
      z.number({ error: 'must be a whole number of days' }).int('must be a whole number of days').min(1, 'must be at least 1').optional(),
    ),
  /** Dashboard working copies (one git repository per dashboard UUID); default `<SWITCHYARD_DATA_DIR>/git`. */
  GIT_REPOS_DIR: optionalString,
  /** How long an assistant confirmation waits for its owner (10 minutes). */
  ASSISTANT_CONFIRMATION_TTL_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 3600)
    .default(600),
  /**
   * How long a task that writes into a protected environment waits for approval before it ends
   * CANCELLED (GIT_DEPLOY_APPROVAL_TIMEOUT_SECONDS, its name when only deploys waited, still counts).
   */
  APPROVAL_TIMEOUT_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(30 * 24 * 3600)
    .default(24 * 3600),
  /** Most a dashboard bundle may unpack to (MiB); a bigger one fails its dashboard instead of filling the worker's memory. */
  BUNDLE_MAX_MB: z.coerce.number().positive().default(64),
  /**
   * Superset calls that only read (GETs, exports, chart-data queries) are asked again when a
   * gateway answers 502/503/504 or an HTML page, or the connection fails: this many attempts in
   * all, waiting about base × 2^n ms (at most the max, half of it random) between them.
   */
  SUPERSET_RETRY_ATTEMPTS: z.coerce.number().int().min(1).max(10).default(4),
  SUPERSET_RETRY_BASE_MS: z.coerce.number().int().min(0).max(60_000).default(500),
  SUPERSET_RETRY_MAX_MS: z.coerce.number().int().min(0).max(300_000).default(8_000),
  /**
   * The browser check (`verification: "browser"`): Chromium pages open at once per worker (each
   * page is a whole Superset frontend: one or two on a small host), the seconds one dashboard's
   * page may take to sign in and draw every chart, and the Chromium binary (Debian's by default).
   */
  BROWSER_CHECK_PAGES: z.coerce.number().int().min(1).max(2).default(1),
  BROWSER_CHECK_BUDGET_SECONDS: z.coerce.number().int().min(5).max(600).default(90),
  BROWSER_CHECK_CHROMIUM: z.string().trim().min(1).default('/usr/bin/chromium'),
  /**
   * Where the server may connect (lib/egress/policy.ts): host names, `*.`-wildcard names, addresses
   * and CIDR ranges, comma-separated. Unset or empty: anywhere.
   */
  ALLOWED_UPSTREAM_HOSTS: allowedUpstreamHosts,
});

export type Config = Readonly<z.infer<typeof schema>>;

export class ConfigError extends Error {
  override name = 'ConfigError';
}

/** Reads and validates the environment once; every module receives the result instead of reading process.env. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = schema.safeParse({ APPROVAL_TIMEOUT_SECONDS: env.GIT_DEPLOY_APPROVAL_TIMEOUT_SECONDS, ...env });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  const cfg = parsed.data;
  const oidc = [cfg.OIDC_ISSUER, cfg.OIDC_CLIENT_ID, cfg.OIDC_REDIRECT_URI];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    throw new ConfigError('Invalid configuration:\n  OIDC_ISSUER, OIDC_CLIENT_ID and OIDC_REDIRECT_URI must be set together');
  }
  const s3 = [cfg.BACKUP_S3_ENDPOINT, cfg.BACKUP_S3_ACCESS_KEY_ID, cfg.BACKUP_S3_SECRET_ACCESS_KEY];
  if (s3.some(Boolean) && !cfg.BACKUP_S3_BUCKET) {
    throw new ConfigError('Invalid configuration:\n  BACKUP_S3_BUCKET is required when other BACKUP_S3_* variables are set');
  }
  if (Boolean(cfg.BACKUP_S3_ACCESS_KEY_ID) !== Boolean(cfg.BACKUP_S3_SECRET_ACCESS_KEY)) {
    throw new ConfigError('Invalid configuration:\n  BACKUP_S3_ACCESS_KEY_ID and BACKUP_S3_SECRET_ACCESS_KEY must be set together');
  }
  if (cfg.SUPERSET_RETRY_MAX_MS < cfg.SUPERSET_RETRY_BASE_MS) {
    throw configError('SUPERSET_RETRY_MAX_MS must be at least SUPERSET_RETRY_BASE_MS');
  }
  checkMetricsPorts(cfg);
  checkTemporalTls(cfg);
  checkConfiguredDestinations(cfg);
  const dataDir = path.resolve(cfg.SWITCHYARD_DATA_DIR);
  return Object.freeze({
    ...cfg,
    SWITCHYARD_DATA_DIR: dataDir,
    BACKUP_DIR: path.resolve(cfg.BACKUP_DIR ?? path.join(dataDir, 'backups')),
    GIT_REPOS_DIR: path.resolve(cfg.GIT_REPOS_DIR ?? path.join(dataDir, 'git')),
  });
}

function configError(message: string): ConfigError {
  return new ConfigError(`Invalid configuration:\n  ${message}`);
}

/** Each metrics listener on a port of its own, none on the API's. */
function checkMetricsPorts(cfg: z.infer<typeof schema>): void {
  const named = (['METRICS_PORT', 'WORKER_METRICS_PORT', 'TEMPORAL_METRICS_PORT'] as const).filter((k) => cfg[k] !== undefined);
  for (const k of named)
    if (cfg[k] === cfg.PORT) throw configError(`${k} must differ from PORT (metrics are never served on the API's listener)`);
  for (const [i, a] of named.entries()) {
    const b = named.slice(i + 1).find((k) => cfg[k] === cfg[a]);
    if (b) throw configError(`${a} and ${b} must differ`);
  }
}

/**
 * The destinations set by variables (the LLM, the OIDC provider, the S3 endpoint) must be ones
 * ALLOWED_UPSTREAM_HOSTS can allow; a name allowed only by address ranges is checked when it is
 * connected to, as every destination is.
 */
function checkConfiguredDestinations(cfg: z.infer<typeof schema>): void {
  const policy = EgressPolicy.parse(cfg.ALLOWED_UPSTREAM_HOSTS);
  const refused = [
    configuredDestinationError(policy, 'LLM_BASE_URL', cfg.LLM_BASE_URL),
    configuredDestinationError(policy, 'OIDC_ISSUER', cfg.OIDC_ISSUER),
    configuredDestinationError(policy, 'BACKUP_S3_ENDPOINT', cfg.BACKUP_S3_ENDPOINT),
  ].filter(Boolean);
  if (refused.length) throw new ConfigError(`Invalid configuration:\n  ${refused.join('\n  ')}`);
}

/** Reads a PEM file named by a variable; the message names the variable, never the content. */
function readPemFile(variable: string, file: string): string {
  let text: string;
  try {
    if (!fs.statSync(file).isFile()) throw configError(`${variable}: ${file} is not a file`);
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw configError(`${variable}: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  if (!text.includes('-----BEGIN ')) throw configError(`${variable}: ${file} is not a PEM file`);
  return text;
}

/**
 * The Temporal TLS files must exist, parse, and (certificate and key) belong together, so a bad
 * deployment stops at start with the variable's name rather than at the first workflow call.
 */
function checkTemporalTls(cfg: z.infer<typeof schema>): void {
  const { TEMPORAL_TLS_CERT: cert, TEMPORAL_TLS_KEY: key, TEMPORAL_TLS_CA: ca } = cfg;
  if (Boolean(cert) !== Boolean(key)) throw configError('TEMPORAL_TLS_CERT and TEMPORAL_TLS_KEY must be set together');
  const tlsFiles = [cert, key, ca, cfg.TEMPORAL_TLS_SERVER_NAME].some(Boolean);
  if (cfg.TEMPORAL_TLS === false && tlsFiles) {
    throw configError('TEMPORAL_TLS=false contradicts TEMPORAL_TLS_CERT/KEY/CA/SERVER_NAME');
  }
  if ((tlsFiles || cfg.TEMPORAL_API_KEY || cfg.TEMPORAL_TLS) && !cfg.TEMPORAL_ADDRESS) {
    throw configError('TEMPORAL_TLS_* and TEMPORAL_API_KEY need TEMPORAL_ADDRESS (the embedded dev server speaks plain gRPC on loopback)');
  }
  if (ca) {
    try {
      new X509Certificate(readPemFile('TEMPORAL_TLS_CA', ca));
    } catch (err) {
      throw err instanceof ConfigError ? err : configError(`TEMPORAL_TLS_CA: ${ca} holds no readable certificate`);
    }
  }
  if (cert && key) {
    let certificate: X509Certificate;
    try {
      certificate = new X509Certificate(readPemFile('TEMPORAL_TLS_CERT', cert));
    } catch (err) {
      throw err instanceof ConfigError ? err : configError(`TEMPORAL_TLS_CERT: ${cert} holds no readable certificate`);
    }
    let privateKey: ReturnType<typeof createPrivateKey>;
    try {
      privateKey = createPrivateKey(readPemFile('TEMPORAL_TLS_KEY', key));
    } catch (err) {
      // The crypto error is dropped on purpose: nothing about the key's content reaches a message.
      throw err instanceof ConfigError
        ? err
        : configError(`TEMPORAL_TLS_KEY: ${key} holds no readable private key (encrypted keys are not supported)`);
    }
    if (!certificate.checkPrivateKey(privateKey)) {
      throw configError('TEMPORAL_TLS_KEY does not belong to the certificate in TEMPORAL_TLS_CERT');
    }
  }
}
