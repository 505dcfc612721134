import { describe, expect, it } from 'vitest';
import { allRoutes } from '../../api/app.ts';
import { can, type Principal } from '../../api/auth/principal.ts';
import type { AppContext } from '../../api/context.ts';
import type { Access } from '../../api/http/routes.ts';
import { isPermission, PERMISSION_NAMES, permissions } from '../../contracts/permissions.ts';
import { inert } from '../../scripts/openapi-document.ts';

// Permissions are checked by the compiler: `npm test` type-checks this file, and each line under
// an expect-error directive must stay an error (a misspelt permission, any string).
// @ts-expect-error a permission that is not in the catalogue
const misspelt: Access = { permission: 'tasks:REED' };
const someString: string = 'tasks:READ';
// @ts-expect-error an unchecked string is not a permission
const unchecked: Access = { permission: someString };
// @ts-expect-error nor may can() be asked about one
const asked = (p: Principal) => can(p, someString);

describe('permissions in code', () => {
  it('names only permissions of the catalogue, in the constants and in every route', () => {
    const constants = Object.values(permissions).flatMap((byAction) => Object.values(byAction));
    expect(constants.filter((p) => !isPermission(p))).toEqual([]);
    expect(new Set(constants)).toEqual(new Set(PERMISSION_NAMES));
    const named = allRoutes(inert() as AppContext).flatMap((r) => (typeof r.access === 'object' ? [r.access.permission] : []));
    expect(named.filter((p) => !isPermission(p))).toEqual([]);
    expect([misspelt, unchecked, asked].length).toBe(3);
  });
});
