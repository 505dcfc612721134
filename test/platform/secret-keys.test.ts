// The secret key's uses and its rotation, against the real PostgreSQL: separate sub-keys for
// tokens and for secrets at rest, every stored secret bound to its row and named by its key id,
// `v1` ciphertexts still read, and a rotation (new key, old one kept as previous, the re-encrypt
// command, old key dropped) that leaves every secret readable and every row under the new key.
import { execFile } from 'node:child_process';
import { createDecipheriv } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TokenIssuer } from '../../api/auth/tokens.ts';
import { reencryptSecrets } from '../../db/secrets.ts';
import { createStores, type Stores } from '../../db/stores.ts';
import { loadConfig } from '../../lib/config.ts';
import { CiphertextError, Keyring, keyringFor } from '../../lib/crypto.ts';
import { createHarness, type Harness } from '../support/harness.ts';

const OLD = 'old-secret-key-for-rotation-tests-0123456789';
const NEW = 'new-secret-key-for-rotation-tests-9876543210';
/** Written by the keyring before key ids existed (`v1`, no associated data), under OLD. */
const V1_UNDER_OLD = 'v1:808afFdOukfNrf-N:-iycateUhltmnqhIGtLi7g:lVDjt4cpM4fgkHLFaumv3Oxdsvc';
const V1_PLAIN = 'svc-password-from-v1';
const ROOT = path.resolve(import.meta.dirname, '../..');

const binding = (rowId: string) => ({ table: 'environments', column: 'password_encrypted', rowId });
const ROW_A = '00000000-0000-4000-8000-00000000000a';
const ROW_B = '00000000-0000-4000-8000-00000000000b';

describe('Keyring', () => {
  it('derives the token key apart from the encryption key: neither opens the other', () => {
    const k = new Keyring(OLD);
    const [, , iv, tag, data] = k.encrypt('x', binding(ROW_A)).split(':');
    const d = createDecipheriv('aes-256-gcm', k.jwtKey, Buffer.from(iv!, 'base64url'));
    d.setAuthTag(Buffer.from(tag!, 'base64url'));
    expect(() => Buffer.concat([d.update(Buffer.from(data!, 'base64url')), d.final()])).toThrow();
    expect(Buffer.from(k.jwtKey).toString('utf8')).not.toContain(OLD);
    expect(k.kid).not.toEqual(new Keyring(NEW).kid);
  });

  it('writes v2:<kid>:… and still reads a v1 ciphertext', () => {
    const k = new Keyring(OLD);
    const c = k.encrypt('s3cret', binding(ROW_A));
    expect(c.startsWith(`v2:${k.kid}:`)).toBe(true);
    expect(c).not.toContain('s3cret');
    expect(k.decrypt(c, binding(ROW_A))).toBe('s3cret');
    expect(k.decrypt(V1_UNDER_OLD, binding(ROW_A))).toBe(V1_PLAIN);
    expect(new Keyring(NEW, [OLD]).decrypt(V1_UNDER_OLD, binding(ROW_B))).toBe(V1_PLAIN);
    expect(k.isCurrent(c)).toBe(true);
    expect(k.isCurrent(V1_UNDER_OLD)).toBe(false);
  });

  it('refuses a ciphertext moved to another row, column or table, with a clear error', () => {
    const k = new Keyring(OLD);
    const c = k.encrypt('s3cret', binding(ROW_A));
    for (const other of [binding(ROW_B), { ...binding(ROW_A), column: 'pat_encrypted' }, { ...binding(ROW_A), table: 'git_configs' }]) {
      const err = catchError(() => k.decrypt(c, other));
      expect(err).toBeInstanceOf(CiphertextError);
      expect(err.message).toContain(`${other.table}.${other.column} of row ${other.rowId}`);
      expect(err.message).toMatch(/another row|altered/);
      expect(err.message).not.toContain('s3cret');
    }
  });

  it('reads what a previous key wrote, and names the key id it lacks once that key is dropped', () => {
    const old = new Keyring(OLD);
    const c = old.encrypt('s3cret', binding(ROW_A));
    const rotated = new Keyring(NEW, [OLD]);
    expect(rotated.decrypt(c, binding(ROW_A))).toBe('s3cret');
    expect(rotated.isCurrent(c)).toBe(false);
    expect(rotated.encrypt('s3cret', binding(ROW_A)).startsWith(`v2:${rotated.kid}:`)).toBe(true);
    const err = catchError(() => new Keyring(NEW).decrypt(c, binding(ROW_A)));
    expect(err).toBeInstanceOf(CiphertextError);
    expect(err.message).toContain(old.kid);
    expect(err.message).toContain('SWITCHYARD_PREVIOUS_SECRET_KEYS');
  });

  it('takes previous keys from SWITCHYARD_PREVIOUS_SECRET_KEYS (comma-separated, each 32+ characters)', () => {
    const config = loadConfig({ SWITCHYARD_SECRET_KEY: NEW, SWITCHYARD_PREVIOUS_SECRET_KEYS: ` ${OLD} ,` });
    expect(config.SWITCHYARD_PREVIOUS_SECRET_KEYS).toEqual([OLD]);
    const k = keyringFor(config, () => {});
    expect(k.kid).toBe(new Keyring(NEW).kid);
    expect(k.decrypt(new Keyring(OLD).encrypt('p', binding(ROW_A)), binding(ROW_A))).toBe('p');
    expect(() => loadConfig({ SWITCHYARD_PREVIOUS_SECRET_KEYS: 'short' })).toThrow(/SWITCHYARD_PREVIOUS_SECRET_KEYS/);
  });

  it('signs tokens with the current key and accepts those a previous key signed until it is dropped', async () => {
    const claims = { sub: 'u1', roles: ['Admin'], scope: [], sid: 's1' };
    const { token: oldToken } = await new TokenIssuer(new Keyring(OLD).jwtKeys).issue(claims);
    const rotated = new TokenIssuer(new Keyring(NEW, [OLD]).jwtKeys);
    expect((await rotated.verify(oldToken)).sub).toBe('u1');
    const { token: newToken } = await rotated.issue(claims);
    expect(JSON.parse(Buffer.from(newToken.split('.')[0]!, 'base64url').toString()).kid).toBe(new Keyring(NEW).kid);
    expect((await new TokenIssuer(new Keyring(NEW).jwtKeys).verify(newToken)).sub).toBe('u1');
    await expect(new TokenIssuer(new Keyring(NEW).jwtKeys).verify(oldToken)).rejects.toThrow(/invalid or expired/);
    // A token from before key ids (no kid in its header) is the current key's.
    const { token: bare } = await new TokenIssuer(new Keyring(NEW).jwtKey).issue(claims);
    expect((await rotated.verify(bare)).sub).toBe('u1');
  });
});

let h: Harness;
beforeAll(async () => {
  h = await createHarness();
}, 120_000);
afterAll(async () => h?.close());

const storesWith = (k: Keyring): Stores => createStores(h.knex, k);

async function secretsOf(s: Stores, ids: { env: string; v1Env: string; git: string; llm: string }) {
  const env = (id: string) => s.environments.get(id).then((r) => s.environments.connection(r).connection.password);
  return {
    env: await env(ids.env),
    v1Env: await env(ids.v1Env),
    git: s.gitConfigs.token(await s.gitConfigs.get(ids.git)),
    llm: (await s.llmProviders.connection(ids.llm, { LLM_BASE_URL: undefined, LLM_API_KEY: undefined, LLM_MODEL: undefined })).apiKey,
  };
}

async function storedCiphertexts(): Promise<string[]> {
  const env = await h.knex('environments').orderBy('id').pluck('password_encrypted');
  const git = await h.knex('git_configs').orderBy('id').pluck('pat_encrypted');
  const llm = await h.knex('llm_providers').orderBy('id').pluck('api_key_encrypted');
  return [...env, ...git, ...llm];
}

describe('secrets at rest in the stores', () => {
  it('binds each secret to its row: one copied onto another environment does not decrypt there', async () => {
    const s = storesWith(new Keyring(OLD));
    const a = await s.environments.create({ name: 'bind-a', base_url: 'http://a.invalid', username: 'svc', password: 'pw-a' });
    const b = await s.environments.create({ name: 'bind-b', base_url: 'http://b.invalid', username: 'svc', password: 'pw-b' });
    expect(a.password_encrypted.startsWith(`v2:${new Keyring(OLD).kid}:`)).toBe(true);
    expect(s.environments.connection(a).connection.password).toBe('pw-a');
    await h.knex('environments').where({ id: b.id }).update({ password_encrypted: a.password_encrypted });
    const moved = await s.environments.get(b.id);
    const err = catchError(() => s.environments.connection(moved));
    expect(err).toBeInstanceOf(CiphertextError);
    expect(err.message).toContain(`environments.password_encrypted of row ${b.id}`);
    // A changed password is bound to its row too.
    const { row } = await s.environments.update(b.id, { password: 'pw-b2' });
    expect(s.environments.connection(row).connection.password).toBe('pw-b2');
    await s.environments.remove(a.id);
    await s.environments.remove(b.id);
  });

  it('rotates: the previous key reads, the re-encrypt command moves every row to the new key id, then the old key can go', async () => {
    const before = storesWith(new Keyring(OLD));
    const env = await before.environments.create({ name: 'rot-env', base_url: 'http://r.invalid', username: 'svc', password: 'pw-env' });
    const v1Env = await before.environments.create({
      name: 'rot-v1',
      base_url: 'http://v1.invalid',
      username: 'svc',
      password: 'placeholder',
    });
    await h.knex('environments').where({ id: v1Env.id }).update({ password_encrypted: V1_UNDER_OLD });
    const git = await before.gitConfigs.create({
      name: 'rot-git',
      provider: 'gitea',
      base_url: 'http://g.invalid',
      owner: 'o',
      default_branch: 'main',
      pat: 'pat-git',
    });
    const llm = await before.llmProviders.create({ name: 'rot-llm', base_url: 'http://l.invalid', model: 'm', api_key: 'key-llm' });
    const ids = { env: env.id, v1Env: v1Env.id, git: git.id, llm: llm.id };
    const plain = { env: 'pw-env', v1Env: V1_PLAIN, git: 'pat-git', llm: 'key-llm' };
    expect(await secretsOf(before, ids)).toEqual(plain);

    const rotated = new Keyring(NEW, [OLD]);
    expect(await secretsOf(storesWith(rotated), ids)).toEqual(plain);
    await expect(secretsOf(storesWith(new Keyring(NEW)), ids)).rejects.toThrow(CiphertextError);

    const out = await reencryptCommand({ SWITCHYARD_SECRET_KEY: NEW, SWITCHYARD_PREVIOUS_SECRET_KEYS: OLD });
    expect(out).toContain('environments.password_encrypted: 2 stored, 2 re-encrypted');
    expect(out).toContain('git_configs.pat_encrypted: 1 stored, 1 re-encrypted');
    expect(out).toContain('llm_providers.api_key_encrypted: 1 stored, 1 re-encrypted');
    expect(out).toContain(`under key ${rotated.kid}`);
    expect(out).not.toMatch(/pw-env|pat-git|key-llm|svc-password/);
    for (const c of await storedCiphertexts()) expect(c.startsWith(`v2:${rotated.kid}:`), c).toBe(true);

    // Idempotent: a second run finds nothing to do.
    expect((await reencryptSecrets(h.knex, rotated)).map((c) => c.reencrypted)).toEqual([0, 0, 0, 0]);
    expect(await secretsOf(storesWith(new Keyring(NEW)), ids)).toEqual(plain);
  });

  it('re-encrypts nothing when a row does not decrypt, and names the row', async () => {
    const k = new Keyring(NEW);
    const s = storesWith(k);
    const bad = await s.environments.create({ name: 'rot-bad', base_url: 'http://x.invalid', username: 'svc', password: 'pw' });
    await h
      .knex('environments')
      .where({ id: bad.id })
      .update({ password_encrypted: new Keyring(OLD).encrypt('pw', binding(bad.id)) });
    const before = await storedCiphertexts();
    const err = await reencryptSecrets(h.knex, k).catch((e: Error) => e);
    expect(err).toBeInstanceOf(CiphertextError);
    expect((err as Error).message).toContain(bad.id);
    expect(await storedCiphertexts()).toEqual(before);
    await s.environments.remove(bad.id);
  });
});

function catchError(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected an error');
}

async function reencryptCommand(env: Record<string, string>): Promise<string> {
  const { stdout } = await promisify(execFile)(process.execPath, ['scripts/secrets-reencrypt.ts'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      DATABASE_URL: h.databaseUrl,
      SWITCHYARD_DATA_DIR: path.join(inject('runDir'), 'reencrypt'),
      LOG_LEVEL: 'warn',
      ...env,
    },
  });
  return stdout;
}
