import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';
import { PERMISSION_NAMES } from '../../contracts/permissions.ts';
import { isAdmin } from './principal.ts';
import { loginForm, toUserView, tokenSchema, userSchema } from './schemas.ts';

export function authRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'post',
      path: '/api/auth/login',
      tag: 'Auth',
      summary: 'Sign in with username and password (OAuth 2.0 password form)',
      description:
        'Failed attempts are throttled per account and per address (429 with Retry-After); the lock expires, it never bars a user for good.',
      access: 'public',
      body: loginForm,
      bodyType: 'application/x-www-form-urlencoded',
      responses: {
        200: { description: 'Access token', schema: tokenSchema },
        401: { description: 'Wrong credentials' },
        429: { description: 'Throttled' },
      },
      handler: (ctx, { body }) => app.auth.passwordLogin(ctx, body.username, body.password),
    }),
    defineRoute({
      method: 'get',
      path: '/api/auth/me',
      tag: 'Auth',
      summary: 'The caller, with roles and effective permissions',
      description:
        "For an API key: `id` is the key's, `username` is the person it acts for (its creator), `display_name` names the key, and `permissions` are those of the key's own that its creator holds now.",
      access: 'authenticated',
      responses: {
        200: {
          description: 'Current user',
          schema: userSchema.extend({ permissions: z.array(z.string()), auth_method: z.enum(['token', 'api_key']) }),
        },
      },
      async handler(ctx, { principal }) {
        if (principal.kind === 'api_key') {
          return {
            id: principal.apiKeyId!,
            // The key acts for its creator: their name, the key's own in display_name.
            username: principal.username,
            email: null,
            display_name: `API key '${principal.apiKeyName}'`,
            auth_source: 'local' as const,
            active: true,
            roles: [],
            last_login_at: null,
            created_at: new Date(0).toISOString(),
            updated_at: new Date(0).toISOString(),
            permissions: [...principal.permissions].sort(),
            auth_method: 'api_key' as const,
          };
        }
        const { user, roles } = await app.auth.currentUser(ctx, principal.userId);
        return {
          ...toUserView(user, roles),
          permissions: isAdmin(principal) ? [...PERMISSION_NAMES] : [...principal.permissions].sort(),
          auth_method: 'token' as const,
        };
      },
    }),
    defineRoute({
      method: 'post',
      path: '/api/auth/logout',
      tag: 'Auth',
      summary: 'Sign out: the token (its session) is refused from now on',
      access: 'authenticated',
      responses: { 200: { description: 'Signed out', schema: z.object({ message: z.string() }) } },
      async handler(ctx, { principal }) {
        await app.auth.logout(ctx, principal);
        return { message: 'Signed out' };
      },
    }),
  ];
}
