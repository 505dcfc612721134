import { z } from 'zod';
import { ForbiddenError } from '../../lib/errors.ts';
import { personalUserId, type Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { defineRoute, type AnyRoute } from '../http/routes.ts';

/**
 * "" and whitespace mean "unset" (null); otherwise trimmed text within bounds, no control
 * characters (Unicode Cc, spelled as ranges so the OpenAPI pattern works in any regex dialect).
 */
const optionalText = (max: number, what: string) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? null : typeof v === 'string' ? v.trim() : v),
    z
      .string({ error: `${what} must be a string or null` })
      .max(max, `${what} must be at most ${max} characters`)
      .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, `${what} must not contain control characters`)
      .nullable()
      .optional(),
  );

const preferencePatch = z
  .object({
    user_id: z.string().max(200).optional().describe('Only your own id is accepted (403 otherwise)'),
    profile_filter_enabled: z
      .boolean({ error: 'profile_filter_enabled must be true or false' })
      .optional()
      .describe('The profile-default dashboard filter'),
    superset_username: optionalText(64, 'superset_username').describe('Your Superset username (bound upstream account); null unbinds'),
    git_username: optionalText(100, 'git_username').describe('Author name for commits made for you'),
    git_email: z.preprocess(
      (v) => (typeof v === 'string' && v.trim() === '' ? null : typeof v === 'string' ? v.trim() : v),
      z.email({ error: 'git_email must be an e-mail address' }).max(254).nullable().optional(),
    ),
  })
  .strict();

const preferenceView = z.object({
  user_id: z.string(),
  profile_filter_enabled: z.boolean(),
  superset_username: z.string().nullable(),
  git_username: z.string().nullable(),
  git_email: z.string().nullable(),
  created_at: z.string().nullable().describe('null until first saved'),
  updated_at: z.string().nullable(),
});

const ownQuery = z.object({ user_id: z.string().max(200).optional().describe('Only your own id is accepted (403 otherwise)') });

const accountsQuery = z.object({
  environment_id: z.string({ error: 'environment_id is required' }).min(1, 'environment_id is required').max(200),
  search: z.string().trim().max(100).default('').describe('Part of a name or username'),
  limit: z.coerce.number().int().min(1).max(100).default(25),
});

const accountView = z.object({
  id: z.number().int().describe('Superset user id'),
  username: z.string().nullable().describe('null when the instance does not expose its security API to the service account'),
  display_name: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  email: z.string().nullable(),
  active: z.boolean().nullable(),
});

/** Preferences belong to the person signed in; an API key acts for its creator but does not reach their preferences. */
function self(principal: Principal, requested: string | undefined): string {
  const own = personalUserId(principal);
  if (!own) throw new ForbiddenError('Profile preferences belong to a person signed in; an API key has none');
  if (requested !== undefined && requested !== own) throw new ForbiddenError('You can only read and change your own profile preferences');
  return own;
}

export function profileRoutes(app: AppContext): AnyRoute[] {
  return [
    defineRoute({
      method: 'get',
      path: '/api/profile/preferences',
      tag: 'Profile',
      summary: 'Your profile preferences',
      description: 'Defaults (filter off, nothing bound, null timestamps) until first saved. Asking for another `user_id` is 403.',
      access: 'authenticated',
      query: ownQuery,
      responses: {
        200: { description: 'The preference (ProfilePreferenceResponse)', schema: preferenceView },
        403: { description: "Another user's preference" },
      },
      async handler(_ctx, { query, principal }) {
        const userId = self(principal, query.user_id);
        return app.profiles.get(userId);
      },
    }),

    defineRoute({
      method: 'patch',
      path: '/api/profile/preferences',
      tag: 'Profile',
      summary: 'Change your profile preferences',
      description:
        'Changes only the fields sent. `profile_filter_enabled: true` needs a bound `superset_username` (sent now or saved before). Empty strings unset a text field. Invalid values answer 422 with one message per field; a `user_id` (body or query) other than yours answers 403.',
      access: 'authenticated',
      validationStatus: 422,
      query: ownQuery,
      body: preferencePatch,
      responses: {
        200: { description: 'The saved preference', schema: preferenceView },
        403: { description: "Another user's preference (code `forbidden`)" },
        422: { description: 'Invalid values (code `validation_failed`, `errors` per field)' },
      },
      async handler(_ctx, { query, body, principal }) {
        self(principal, query.user_id);
        const userId = self(principal, body.user_id);
        const { user_id: _ignored, ...patch } = body;
        return app.profiles.update(userId, patch);
      },
    }),

    defineRoute({
      method: 'get',
      path: '/api/profile/upstream-accounts',
      tag: 'Profile',
      summary: 'Find Superset accounts to bind',
      description:
        "Accounts of the environment's Superset whose name or username contains `search`, normalised, to bind to your profile. Details: docs/environments.md#get-apiprofileupstream-accounts.",
      access: { permission: 'environments:READ' },
      query: accountsQuery,
      responses: {
        200: {
          description: 'Candidate accounts',
          schema: z.object({ environment_id: z.string(), search: z.string(), items: z.array(accountView) }),
        },
        404: { description: 'Unknown environment' },
        503: { description: 'Superset unavailable (code `upstream_unavailable`)' },
      },
      async handler(_ctx, { query }) {
        return app.supersets.use(query.environment_id, async (client, env) => ({
          environment_id: env.id,
          search: query.search,
          items: await client.security.findAccounts(query.search, query.limit),
        }));
      },
    }),
  ];
}
