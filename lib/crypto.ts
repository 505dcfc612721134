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

/**
 * The one secret key (SWITCHYARD_SECRET_KEY) yields separate sub-keys for token signing and
 * for encryption at rest, so neither use can weaken the other.
 */
export class Keyring {
  readonly jwtKey: Uint8Array;
  private readonly encKey: Buffer;

  constructor(secret: string) {
    const ikm = Buffer.from(secret, 'utf8');
    this.jwtKey = new Uint8Array(hkdfSync('sha256', ikm, 'switchyard', 'jwt-hs256', 32));
    this.encKey = Buffer.from(hkdfSync('sha256', ikm, 'switchyard', 'aes-256-gcm-at-rest', 32));
  }

  /** AES-256-GCM; the output `v1:<iv>:<tag>:<ciphertext>` (base64url) is safe to store. */
  encrypt(plain: string): string {
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', this.encKey, iv);
    const data = Buffer.concat([c.update(plain, 'utf8'), c.final()]);
    return ['v1', iv.toString('base64url'), c.getAuthTag().toString('base64url'), data.toString('base64url')].join(':');
  }

  decrypt(stored: string): string {
    const [v, iv, tag, data] = stored.split(':');
    if (v !== 'v1' || !iv || !tag || data === undefined) throw new Error('unrecognised ciphertext');
    const d = createDecipheriv('aes-256-gcm', this.encKey, Buffer.from(iv, 'base64url'));
    d.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([d.update(Buffer.from(data, 'base64url')), d.final()]).toString('utf8');
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
    return fs.readFileSync(file, 'utf8').trim(); // another process created it first
  }
  log(`SWITCHYARD_SECRET_KEY is not set: generated one into ${file} (set the variable in production)`);
  return key;
}

/** The process's keyring: from SWITCHYARD_SECRET_KEY, else the development key in SWITCHYARD_DATA_DIR. */
export function keyringFor(config: { SWITCHYARD_SECRET_KEY?: string; SWITCHYARD_DATA_DIR: string }, log: (m: string) => void): Keyring {
  return new Keyring(loadSecret(config.SWITCHYARD_SECRET_KEY, config.SWITCHYARD_DATA_DIR, log));
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
