/**
 * The identity stores, one per aggregate, each the only writer of its tables:
 *
 * | Store | Tables |
 * |---|---|
 * | UserStore (users.ts) | users |
 * | RoleStore (roles.ts) | roles, role_permissions, user_roles, group_mappings |
 * | SessionStore (sessions.ts) | sessions |
 * | ApiKeyStore (api-keys.ts) | api_keys |
 * | OidcLoginStateStore (oidc-login-states.ts) | oidc_login_states |
 * | LoginThrottleStore (login-throttle.ts) | login_throttle |
 * | SecurityEventStore (security-events.ts) | security_events |
 * | AccessStore (access.ts) | none: reads across users, sessions, API keys and roles to authorize a request |
 *
 * `transaction` binds all of them to one transaction, for a change that spans aggregates (a user
 * created with roles, a password change that ends sessions, an OIDC sign-in that provisions).
 */
import type { Knex } from 'knex';
import { AccessStore } from './access.ts';
import { ApiKeyStore } from './api-keys.ts';
import { LoginThrottleStore } from './login-throttle.ts';
import { OidcLoginStateStore } from './oidc-login-states.ts';
import { RoleStore } from './roles.ts';
import { SecurityEventStore } from './security-events.ts';
import { SessionStore } from './sessions.ts';
import { UserStore } from './users.ts';

export class IdentityStores {
  readonly users: UserStore;
  readonly roles: RoleStore;
  readonly sessions: SessionStore;
  readonly apiKeys: ApiKeyStore;
  readonly oidcStates: OidcLoginStateStore;
  readonly throttle: LoginThrottleStore;
  readonly securityEvents: SecurityEventStore;
  readonly access: AccessStore;
  private readonly knex: Knex;

  constructor(knex: Knex) {
    this.knex = knex;
    this.users = new UserStore(knex);
    this.roles = new RoleStore(knex);
    this.sessions = new SessionStore(knex);
    this.apiKeys = new ApiKeyStore(knex);
    this.oidcStates = new OidcLoginStateStore(knex);
    this.throttle = new LoginThrottleStore(knex);
    this.securityEvents = new SecurityEventStore(knex);
    this.access = new AccessStore(knex);
  }

  /** Runs `work` with every store bound to one transaction: all of its writes commit, or none. */
  transaction<T>(work: (stores: IdentityStores) => Promise<T>): Promise<T> {
    return this.knex.transaction((trx) => work(new IdentityStores(trx)));
  }
}

export type { Access, GroupMappingRecord, RoleRecord, RoleWithPermissions } from './roles.ts';
export type { ApiKeyRecord, NewApiKey } from './api-keys.ts';
export type { NewSecurityEvent, SecurityEventFilter, SecurityEventRecord } from './security-events.ts';
export type { NewUser, UserPatch, UserRecord } from './users.ts';
export type { ApiKeyAccess, SessionAccess } from './access.ts';
export type { OidcLoginStateRecord } from './oidc-login-states.ts';
export type { ThrottleCounter, ThrottleCounterUpdate, ThrottleDecision } from './login-throttle.ts';
export { AccessStore, ApiKeyStore, LoginThrottleStore, OidcLoginStateStore, RoleStore, SecurityEventStore, SessionStore, UserStore };
