import { randomUUID, webcrypto } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
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

/** HS256 access tokens (claims sub, roles, scope, sid, jti); logout revokes the sid. */
export class TokenIssuer {
  // Imported once: given raw bytes, jose imports the key again on every sign and verify, one more
  // crypto job per request.
  private readonly key: Promise<webcrypto.CryptoKey>;
  constructor(key: Uint8Array) {
    this.key = webcrypto.subtle.importKey('raw', key, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
  }

  async issue(claims: { sub: string; roles: string[]; scope: string[]; sid: string }): Promise<{ token: string; expiresIn: number }> {
    const token = await new SignJWT({ roles: claims.roles, scope: claims.scope.join(' '), sid: claims.sid })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claims.sub)
      .setJti(randomUUID())
      .setIssuer(ISSUER)
      .setAudience(AUDIENCE)
      .setIssuedAt()
      .setExpirationTime(`${TOKEN_TTL_SECONDS}s`)
      .sign(await this.key);
    return { token, expiresIn: TOKEN_TTL_SECONDS };
  }

  async verify(token: string): Promise<AccessClaims> {
    try {
      const { payload } = await jwtVerify(token, await this.key, { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'] });
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
