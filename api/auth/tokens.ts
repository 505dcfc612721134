import { randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import type { JwtKey } from '../../lib/crypto.ts';
import { UnauthenticatedError } from '../../lib/errors.ts';

export const TOKEN_TTL_SECONDS = 30 * 60;
const ISSUER = 'switchyard';
const AUDIENCE = 'switchyard-api';

export interface AccessClaims {
  sub: string;
  roles: string[];
  scope: string;
  sid: string;
  jti: string;
}

/**
 * HS256 access tokens (claims sub, roles, scope, sid, jti); logout revokes the sid. Signed with the
 * first key, named in the `kid` header; verified with the key the header names, so tokens a
 * previous key signed stay valid while that key is configured (SWITCHYARD_PREVIOUS_SECRET_KEYS). A
 * token without `kid` (issued before key ids) is the first key's.
 */
export class TokenIssuer {
  // Imported once: given raw bytes, jose imports the key again on every sign and verify, one more
  // crypto job per request.
  private readonly keys: Map<string | undefined, Promise<webcrypto.CryptoKey>>;
  private readonly signing: { kid?: string; key: Promise<webcrypto.CryptoKey> };

  constructor(keys: Uint8Array | readonly JwtKey[]) {
    const list: Array<{ kid?: string; key: Uint8Array }> = keys instanceof Uint8Array ? [{ key: keys }] : [...keys];
    if (!list.length) throw new Error('TokenIssuer needs a key');
    const imported = list.map((k) => ({
      kid: k.kid,
      key: webcrypto.subtle.importKey('raw', k.key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']),
    }));
    this.signing = imported[0]!;
    this.keys = new Map(imported.map((k) => [k.kid, k.key]));
    this.keys.set(undefined, this.signing.key);
  }

  async issue(claims: { sub: string; roles: string[]; scope: string[]; sid: string }): Promise<{ token: string; expiresIn: number }> {
    const token = await new SignJWT({ roles: claims.roles, scope: claims.scope.join(' '), sid: claims.sid })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT', ...(this.signing.kid ? { kid: this.signing.kid } : {}) })
      .setSubject(claims.sub)
      .setJti(randomUUID())
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .sign(await this.signing.key);
    return { token, expiresIn: TOKEN_TTL_SECONDS };
  }

  /** The key a token's `kid` names; none (a token from before key ids) is the signing key. */
  private async keyFor(kid: string | undefined): Promise<webcrypto.CryptoKey> {
    const key = this.keys.get(kid);
    if (!key) throw new Error('unknown key id');
    return key;
  }

  async verify(token: string): Promise<AccessClaims> {
    try {
      const { payload } = await jwtVerify(token, (header) => this.keyFor(header.kid), {
        issuer: ISSUER,
        audience: AUDIENCE,
        algorithms: ['HS256'],
      });
      if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string') throw new Error('missing claims');
      return {
        sub: payload.sub,
        sid: payload.sid,
        jti: String(payload.jti ?? ''),
        roles: Array.isArray(payload.roles) ? payload.roles.map(String) : [],
        scope: typeof payload.scope === 'string' ? payload.scope : '',
      };
    } catch {
      throw new UnauthenticatedError('The access token is invalid or expired');
    }
  }
}
