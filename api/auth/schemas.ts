import { z } from 'zod';
import type { UserRecord } from '../../db/identity/index.ts';

export const userSchema = z.object({
  id: z.string(),
  username: z.string(),
  email: z.string().nullable(),
  display_name: z.string().nullable(),
  auth_source: z.enum(['local', 'oidc']),
  active: z.boolean(),
  roles: z.array(z.string()),
  last_login_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type UserView = z.infer<typeof userSchema>;

export function toUserView(u: UserRecord, roles: string[]): UserView {
  return {
    id: u.id,
    username: u.username,
    email: u.email,
    display_name: u.display_name,
    auth_source: u.auth_source,
    active: u.active,
    roles,
    last_login_at: u.last_login_at ? u.last_login_at.toISOString() : null,
    created_at: u.created_at.toISOString(),
    updated_at: u.updated_at.toISOString(),
  };
}

export const tokenSchema = z.object({ access_token: z.string(), token_type: z.literal('bearer'), expires_in: z.number() });

export const loginForm = z.object({
  username: z.string({ error: 'username is required' }).trim().min(1, 'username is required').max(200),
  password: z.string({ error: 'password is required' }).min(1, 'password is required').max(1024),
  grant_type: z.literal('password').optional(),
});
