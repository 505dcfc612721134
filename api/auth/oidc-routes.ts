import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { oidcNotConfigured } from './oidc.ts';
import { tokenSchema } from './schemas.ts';

const NOT_CONFIGURED = '`oidc_not_configured`: OIDC is not configured on this server (OIDC_ISSUER unset)';

/**
 * OAuth 2.0 spells every authorization-response value in printable ASCII (VSCHAR, %x20-7E). The
 * bounds keep the whole redirect URL, percent-encoded, inside the HTTP server's 16 KiB header
 * limit, so a well-formed callback can never be cut off with a 431 before it is read.
 */
const vschar = (name: string, max: number) =>
  z
    .string({ error: (i) => (i.input === undefined ? `${name} is required` : `${name} must be given once, as text`) })
    .max(max, `${name} must be at most ${max} characters`)
    .regex(/^[\x20-\x7e]*$/, `${name} must be printable ASCII`);

const callbackQuery = z
  .object({
    state: vschar('state', 512).min(1, 'state is required'),
    code: vschar('code', 2048).optional(),
    error: vschar('error', 256).optional(),
    error_description: vschar('error_description', 512).optional(),
    iss: vschar('iss', 512).optional(),
    session_state: vschar('session_state', 512).optional(),
  })
  .describe('The authorization response the identity provider appends to the redirect URI');

export function oidcRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/auth/oidc/login',
      tag: 'Auth',
      summary: 'Start single sign-on: redirect to the OpenID Connect provider',
      description:
        "Answers `302` to the OpenID Connect provider's authorization endpoint (authorization code flow with `state`, `nonce` and PKCE), binding the single-use state to this browser by a cookie. Details: docs/identity-and-access.md#get-apiauthoidclogin.",
      access: 'public',
      responses: {
        302: { description: 'Redirect to the identity provider (Location header)' },
        404: { description: NOT_CONFIGURED },
        429: { description: '`too_many_requests`: too many sign-in starts from this address (Retry-After says when to try again)' },
        503: { description: 'The identity provider is unreachable' },
      },
      async handler(ctx) {
        if (!app.oidc) throw oidcNotConfigured();
        const { url, cookie } = await app.oidc.startLogin(ctx);
        ctx.append('Set-Cookie', cookie);
        ctx.redirect(url);
      },
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/oidc/callback',
      tag: 'Auth',
      summary: 'Finish single sign-on: redeem the provider’s code and return a session token',
      description:
        'The redirect URI the provider sends the browser back to: checks the state, redeems the code, creates or updates the user, maps its groups to roles and opens a session. Details: docs/identity-and-access.md#get-apiauthoidccallback.',
      access: 'public',
      query: callbackQuery,
      responses: {
        200: { description: 'Access token', schema: tokenSchema },
        400: {
          description:
            '`oidc_state_invalid`: unknown, used, expired or foreign state; or no code (`validation_failed` for a malformed request)',
        },
        401: {
          description:
            '`oidc_login_failed`: the provider refused the sign-in, rejected the code, or the ID token (nonce, signature, audience) did not verify; or the account is disabled',
        },
        404: { description: NOT_CONFIGURED },
        503: { description: 'The identity provider is unreachable' },
      },
      async handler(ctx, { query }) {
        if (!app.oidc) throw oidcNotConfigured();
        // The state is single-use whatever the outcome, so the binding cookie goes in every case.
        ctx.append('Set-Cookie', app.oidc.clearCookie());
        const params = Object.fromEntries(Object.entries(query).filter((e): e is [string, string] => typeof e[1] === 'string'));
        return app.oidc.finishLogin(ctx, params);
      },
    }),
  ];
}
