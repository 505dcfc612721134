import { z } from 'zod';
import { PERMISSION_NAMES } from '../../contracts/permissions.ts';

export const uuidParam = (name: string) => z.object({ [name]: z.uuid(`${name} must be a UUID`) });

export const permissionList = z
  .array(z.enum(PERMISSION_NAMES as [string, ...string[]], { error: (i) => `unknown permission '${String(i.input)}'` }))
  .max(PERMISSION_NAMES.length)
  .transform((p) => [...new Set(p)].sort());

export const roleView = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  builtin: z.boolean(),
  permissions: z.array(z.string()),
  created_at: z.string(),
  updated_at: z.string(),
});

export const password = z.string().min(12, 'password must be at least 12 characters').max(1024);
export const username = z
  .string()
  .trim()
  .min(1, 'username is required')
  .max(150)
  .regex(/^[A-Za-z0-9._@+-]+$/, 'username may hold letters, digits and . _ @ + -');
