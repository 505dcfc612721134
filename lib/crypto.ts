import {
  createCipheriv,
  createDecipheriv,
  createHash,
  hkdfSync,
  randomBytes,
  scrypt,
  timingSafeEqual,
  type ScryptOptions,
} from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { AppError } from './errors.ts';

/** Where a stored secret lives: its ciphertext is bound to it (AES-GCM associated data). */
export interface SecretBinding {
  table: string;
  column: string;
  rowId: string;
}

/** A token-signing key and the id tokens name it by (the `kid` header). */
export interface JwtKey {
  kid: string;
  key: Uint8Array;
}

/** A stored secret that does not decrypt here: a key not configured, another row's ciphertext, or altered bytes. */
export class CiphertextError extends AppError {
  override name = 'CiphertextError';
  constructor(detail: string, cause?: unknown) {
    super(500, 'secret_unreadable', 'Stored secret unreadable', detail, { cause });
  }
}

/** The sub-keys one secret yields; the labels are fixed, so v1 ciphertexts and earlier tokens still verify. */
class SecretKey {
  readonly kid: string;
  readonly jwt: Uint8Array;
  readonly enc: Buffer;

  constructor(secret: string) {
    const ikm = Buffer.from(secret, 'utf8');
    this.jwt = new Uint8Array(hkdfSync('sha256', ikm, 'switchyard', 'jwt-hs256', 32));
    this.enc = Buffer.from(hkdfSync('sha256', ikm, 'switchyard', 'aes-256-gcm-at-rest', 32));
    // Names the key in ciphertexts and token headers without revealing anything of it.
    this.kid = Buffer.from(hkdfSync('sha256', ikm, 'switchyard', 'key-id', 9)).toString('base64url');
  }
}

const b64 = (b: Buffer) => b.toString('base64url');
const where = (b: SecretBinding) => `${b.table}.${b.column} of row ${b.rowId}`;
const associatedData = (kid: string, b: SecretBinding) => Buffer.from(JSON.stringify(['v2', kid, b.table, b.column, b.rowId]), 'utf8');

function open(key: Buffer, iv: string, tag: string, data: string, aad?: Buffer): string {
  const d = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  if (aad) d.setAAD(aad);
  d.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([d.update(Buffer.from(data, 'base64url')), d.final()]).toString('utf8');
}

/**
 * The secret key (SWITCHYARD_SECRET_KEY) and the previous ones still read
 * (SWITCHYARD_PREVIOUS_SECRET_KEYS). Each yields separate sub-keys for token signing and for
 * encryption at rest, so neither use can weaken the other. What is written is written with the
 * current key; what a previous key wrote is still read until `npm run secrets:reencrypt` moves it.
 */
export class Keyring {
  /** The current token-signing key. */
  readonly jwtKey: Uint8Array;
  /** Every key tokens are verified with, the current (signing) one first. */
  readonly jwtKeys: readonly JwtKey[];
  /** The current key's id, named in what it encrypts. */
  readonly kid: string;
  private readonly keys: readonly SecretKey[];

  constructor(secret: string, previous: readonly string[] = []) {
    this.keys = [secret, ...previous.filter((p) => p !== secret)].map((s) => new SecretKey(s));
    this.kid = this.keys[0]!.kid;
    this.jwtKey = this.keys[0]!.jwt;
    this.jwtKeys = this.keys.map((k) => ({ kid: k.kid, key: k.jwt }));
  }

  /** AES-256-GCM bound to its row; `v2:<kid>:<iv>:<tag>:<ciphertext>` (base64url) is safe to store. */
  encrypt(plain: string, binding: SecretBinding): string {
    const { kid, enc } = this.keys[0]!;
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', enc, iv);
    c.setAAD(associatedData(kid, binding));
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v2', kid, b64(iv), b64(c.getAuthTag()), b64(data)].join(':');
  }

  /** The plain text; CiphertextError (naming the row, never the secret) when it does not decrypt here. */
  decrypt(stored: string, binding: SecretBinding): string {
    const parts = stored.split(':');
    if (parts[0] === 'v2' && parts.length === 5) return this.decryptV2(parts, binding);
    if (parts[0] === 'v1' && parts.length === 4) return this.decryptV1(parts, binding);
    throw new CiphertextError(`${where(binding)} is not a ciphertext this version reads`);
  }

  /** Whether a stored ciphertext is already what `encrypt` writes now (v2 under the current key). */
  isCurrent(stored: string): boolean {
    return stored.startsWith(`v2:${this.kid}:`);
  }

  private decryptV2([, kid, iv, tag, data]: string[], binding: SecretBinding): string {
    const key = this.keys.find((k) => k.kid === kid);
    if (!key)
      throw new CiphertextError(
        `${where(binding)} was encrypted with key id ${kid}, which is neither SWITCHYARD_SECRET_KEY nor one of SWITCHYARD_PREVIOUS_SECRET_KEYS: configure that key, or enter the secret again`,
      );
    try {
      return open(key.enc, iv!, tag!, data!, associatedData(kid!, binding));
    } catch (err) {
      throw new CiphertextError(
        `${where(binding)} does not decrypt for this row: the ciphertext belongs to another row or was altered; enter the secret again`,
        err,
      );
    }
  }

  /** v1 carries no key id nor binding: each configured key is tried (the tag tells the right one). */
  private decryptV1([, iv, tag, data]: string[], binding: SecretBinding): string {
    for (const key of this.keys) {
      try {
        return open(key.enc, iv!, tag!, data!);
      } catch {
        // expected: not this key's: the next key is tried, and none opening it is reported below.
        // not this key's
      }
    }
    throw new CiphertextError(
      `${where(binding)} (a v1 ciphertext) decrypts with none of the configured keys: configure the key it was written with, or enter the secret again`,
    );
  }
}

/** SWITCHYARD_SECRET_KEY, or in development a key generated once into the data folder. */
export function loadSecret(configured: string | undefined, dataDir: string, log: (m: string) => void): string {
  if (configured) return configured;
  const file = path.join(dataDir, 'secret.key');
  if (fs.existsSync(file)) return fs.readFileSync(file, 'utf8').trim();
  fs.mkdirSync(dataDir, { recursive: true });
  const key = randomBytes(48).toString('base64url');
  try {
    fs.writeFileSync(file, key, { mode: 0o600, flag: 'wx' });
  } catch {
    // expected: the file exists (another process created it first): its key is read.
    return fs.readFileSync(file, 'utf8').trim(); // another process created it first
  }
  log(`SWITCHYARD_SECRET_KEY is not set: generated one into ${file} (set the variable in production)`);
  return key;
}

/**
 * The process's keyring: SWITCHYARD_SECRET_KEY (else the development key in SWITCHYARD_DATA_DIR)
 * and the SWITCHYARD_PREVIOUS_SECRET_KEYS still read during a rotation.
 */
export function keyringFor(
  config: { SWITCHYARD_SECRET_KEY?: string; SWITCHYARD_PREVIOUS_SECRET_KEYS?: readonly string[]; SWITCHYARD_DATA_DIR: string },
  log: (m: string) => void,
): Keyring {
  return new Keyring(
    loadSecret(config.SWITCHYARD_SECRET_KEY, config.SWITCHYARD_DATA_DIR, log),
    config.SWITCHYARD_PREVIOUS_SECRET_KEYS ?? [],
  );
}

export function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

// scrypt, memory-hard: N=2^15, r=8 needs 32 MiB per hash.
const SCRYPT = { N: 1 << 15, r: 8, p: 1 };

function scryptAsync(password: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, keylen, opts, (err, key) => (err ? reject(err) : resolve(key))));
}

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptAsync(password, salt, 32, { ...SCRYPT, maxmem: 64 * 1024 * 1024 });
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  // Unknown users still cost one hash, so timing does not reveal which usernames exist.
  const parts = (stored ?? DUMMY_HASH).split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return false;
  const [, n, r, p, salt, hash] = parts;
  const expected = Buffer.from(hash, 'base64url');
  const key = await scryptAsync(password, Buffer.from(salt, 'base64url'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 * 1024 * 1024,
  });
  return stored !== null && timingSafeEqual(key, expected);
}

const DUMMY_HASH = `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${Buffer.alloc(16).toString('base64url')}$${Buffer.alloc(32).toString('base64url')}`;

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}
