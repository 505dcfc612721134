/** What the security event log records: the `event_type` of a security event. */
export const SECURITY_EVENT_TYPES = [
  'LOGIN',
  'LOGIN_FAILED',
  'LOGIN_THROTTLED',
  'OIDC_LOGIN',
  'OIDC_LOGIN_FAILED',
  'CURRENT_USER_READ',
  'LOGOUT',
  'API_KEY_CREATED',
  'API_KEY_REVOKED',
  'ROLE_CREATED',
  'ROLE_UPDATED',
  'ROLE_DELETED',
  'USER_CREATED',
  'USER_UPDATED',
  'USER_DELETED',
  'GROUP_MAPPING_CREATED',
  'GROUP_MAPPING_DELETED',
  'ENVIRONMENT_CREATED',
  'ENVIRONMENT_UPDATED',
  'ENVIRONMENT_DELETED',
  'ENVIRONMENT_TESTED',
] as const;
export type SecurityEventType = (typeof SECURITY_EVENT_TYPES)[number];
export type SecurityEventOutcome = 'success' | 'failure';
