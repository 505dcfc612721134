/**
 * The permission catalogue: `resource:ACTION`. Roles and API keys may only hold names listed
 * here, so a typo is a 400 instead of a permission that silently grants nothing.
 */
export const PERMISSIONS = {
  'tasks:READ': 'Read every task, its logs and reports',
  'tasks:WRITE': "Cancel other users' tasks",
  'tasks:APPROVE':
    "Approve or reject another user's gated task (a deploy into a protected environment), with the permission that starts it",
  'environments:READ': 'List environments and what they hold (dashboards, datasets)',
  'environments:WRITE': 'Create, change and delete environments',
  'dashboards:READ': 'Read dashboards, thumbnails and database mappings',
  'dashboards:MIGRATE': 'Migrate dashboards between environments; save database mappings',
  'dashboards:BACKUP': 'Back up and restore dashboards',
  'dashboards:VALIDATE':
    "Validate an environment's dashboards: every chart's query run in its Superset (reads only, at the environment's query bound)",
  'datasets:READ': 'List datasets',
  'datasets:WRITE': 'Map columns and generate documentation for datasets',
  'git:READ': 'Read git configurations and dashboard repository status',
  'git:WRITE': 'Manage git configurations; commit, pull, push, merge, deploy',
  'pull_requests:OPEN': "Open a pull request for a dashboard repository's branch, with its preview",
  'pull_requests:UPDATE': 'Refresh a pull request: its body, the preview and the commit status of the head commit',
  'pull_requests:MERGE_DEPLOY':
    "Have a merged pull request deployed: set a git config's webhook, which then acts with this person's rights",
  'assistant:USE': 'Talk to the assistant',
  'dataset_review:READ': 'Read own dataset review sessions',
  'dataset_review:WRITE': 'Run dataset review sessions',
  'dataset_review:LAUNCH': 'Launch a reviewed dataset',
  'clean_release:READ': 'Read release candidates, checks and reports',
  'clean_release:WRITE': 'Register candidates, artifacts, manifests and run checks',
  'clean_release:APPROVE': 'Approve, reject, publish and revoke release candidates',
  'schedules:READ': 'List schedules of recurring backups and drift reports',
  'schedules:WRITE': 'Create, change, pause, resume, trigger and delete schedules',
  'admin:settings:WRITE': 'Manage API keys and system settings',
} as const;

export type Permission = keyof typeof PERMISSIONS;
export const PERMISSION_NAMES = Object.keys(PERMISSIONS) as Permission[];

/** Whether a string (a request's, a stored row's) names a permission of the catalogue. */
export function isPermission(name: string): name is Permission {
  return Object.hasOwn(PERMISSIONS, name);
}

/**
 * The catalogue by resource and action, for code: `permissions.tasks.read` is `'tasks:READ'`.
 * Route access and `can()` take a `Permission`, so a misspelt one does not compile.
 */
export const permissions = {
  tasks: { read: 'tasks:READ', write: 'tasks:WRITE', approve: 'tasks:APPROVE' },
  environments: { read: 'environments:READ', write: 'environments:WRITE' },
  dashboards: { read: 'dashboards:READ', migrate: 'dashboards:MIGRATE', backup: 'dashboards:BACKUP', validate: 'dashboards:VALIDATE' },
  datasets: { read: 'datasets:READ', write: 'datasets:WRITE' },
  git: { read: 'git:READ', write: 'git:WRITE' },
  pullRequests: { open: 'pull_requests:OPEN', update: 'pull_requests:UPDATE', mergeDeploy: 'pull_requests:MERGE_DEPLOY' },
  assistant: { use: 'assistant:USE' },
  datasetReview: { read: 'dataset_review:READ', write: 'dataset_review:WRITE', launch: 'dataset_review:LAUNCH' },
  cleanRelease: { read: 'clean_release:READ', write: 'clean_release:WRITE', approve: 'clean_release:APPROVE' },
  schedules: { read: 'schedules:READ', write: 'schedules:WRITE' },
  admin: { settingsWrite: 'admin:settings:WRITE' },
} as const satisfies Record<string, Record<string, Permission>>;

const viewer: Permission[] = [
  'tasks:READ',
  'environments:READ',
  'dashboards:READ',
  'datasets:READ',
  'git:READ',
  'clean_release:READ',
  'dataset_review:READ',
  'assistant:USE',
  'schedules:READ',
];

/** Built-in roles, seeded at start; Admin passes every check without listing permissions. */
export const BUILTIN_ROLES: Record<string, { description: string; permissions: Permission[] }> = {
  Admin: { description: 'Everything, including administration', permissions: [] },
  Operator: {
    description: 'Runs environments day to day: migrations, backups, git, dataset work',
    permissions: [
      ...viewer,
      'tasks:WRITE',
      'environments:WRITE',
      'dashboards:MIGRATE',
      'dashboards:BACKUP',
      'dashboards:VALIDATE',
      'datasets:WRITE',
      'git:WRITE',
      'pull_requests:OPEN',
      'pull_requests:UPDATE',
      'dataset_review:WRITE',
      'clean_release:WRITE',
      'schedules:WRITE',
    ],
  },
  Viewer: { description: 'Reads everything a team shares; changes nothing', permissions: viewer },
  ReleaseManager: {
    description: 'Decides on releases and dataset launches',
    permissions: [
      ...viewer,
      'clean_release:WRITE',
      'clean_release:APPROVE',
      'dashboards:VALIDATE',
      'dataset_review:WRITE',
      'dataset_review:LAUNCH',
      'tasks:APPROVE',
      'git:WRITE',
      'pull_requests:OPEN',
      'pull_requests:UPDATE',
      'pull_requests:MERGE_DEPLOY',
    ],
  },
};

/** The built-in role that passes every permission check. */
export const ADMIN_ROLE_NAME = 'Admin';

/** A person's live access: their roles and what those roles permit, read at the moment it matters. */
export interface LiveAccess {
  roles: readonly string[];
  permissions: readonly string[];
}

/** Whether someone with this live access holds `permission` (role Admin holds every one). */
export function holds(access: LiveAccess, permission: string): boolean {
  return access.roles.includes(ADMIN_ROLE_NAME) || access.permissions.includes(permission);
}

/**
 * What an API key may do now: those of its own permissions its creator still holds (an Admin
 * creator: all of them). Checked at every use, so a creator who loses a permission takes it from
 * their keys at once, and a key never does more than the person it acts for.
 */
export function keyPermissions(own: readonly string[], creator: LiveAccess): string[] {
  return own.filter((p) => holds(creator, p));
}
