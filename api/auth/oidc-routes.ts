import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { oidcNotConfigured, OIDC_STATE_TTL_SECONDS } from './oidc.ts';
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
      description: [
        'Answers `302` to the provider’s authorization endpoint (authorization code flow, scopes `openid profile email`,',
        `with \`state\`, \`nonce\` and PKCE S256). The state is kept server-side for ${OIDC_STATE_TTL_SECONDS / 60} minutes and is single-use;`,
        'an HttpOnly cookie `switchyard_oidc_state` (path `/api/auth/oidc`) binds it to the browser, so the callback',
        'must be reached by the same browser (cookie jar). 503 `upstream_unavailable` when the provider’s discovery',
        'document cannot be fetched. Starts are counted per client address (30 in 15 minutes, then a lock that doubles',
        'from 1 s up to 15 minutes): beyond that 429 `too_many_requests` with Retry-After, and no state is stored.',
        'Credentials sent along are ignored.',
      ].join(' '),
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
      description: [
        'The redirect URI (OIDC_REDIRECT_URI) the provider sends the browser back to. Checks the state (known, unused,',
        'not expired, bound to this browser by the login cookie), redeems the code with the PKCE verifier and checks the',
        'ID token and its nonce. On the first login the user is created (`auth_source` `oidc`; username from',
        '`preferred_username`, else `email`, else `sub`; a name already taken by another account gets a `-2`, `-3`, ...',
        'suffix); later logins update email and display name. The user’s roles are replaced by the roles that',
        '`group_mappings` assign to the groups in the claim OIDC_GROUPS_CLAIM (default `groups`); no mapped group means',
        'no roles. Opens a session (like password login) and writes OIDC_LOGIN, or OIDC_LOGIN_FAILED with a reason.',
      ].join(' '),
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
