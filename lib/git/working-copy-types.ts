/** What a dashboard's working copy answers and takes: its status, diffs, history, merge state and credentials. */

export interface Credentials {
  username: string;
  token: string;
  /** The origin of the git config the token belongs to: the only server it is sent to (remote-http.ts). */
  origin: string;
}

export interface Author {
  name: string;
  email: string;
}

export interface FileStatus {
  staged: string[];
  modified: string[];
  untracked: string[];
}

export interface WorkingCopyStatus extends FileStatus {
  branch: string;
  head: string | null;
  remote_head: string | null;
  has_remote: boolean;
  ahead: number;
  behind: number;
  merging: boolean;
  conflicted: string[];
}

export interface FileDiff {
  path: string;
  change: 'added' | 'modified' | 'deleted';
  patch: string;
}

export interface HistoryEntry {
  commit: string;
  message: string;
  author: { name: string; email: string };
  committed_at: string;
  files: string[];
}

export interface ConflictFile {
  path: string;
  ours: string | null;
  theirs: string | null;
  base: string | null;
  /** The file as it is now in the working tree (with conflict markers until resolved). */
  working: string | null;
  resolved: boolean;
}

export type Resolution = { path: string; strategy: 'ours' | 'theirs' } | { path: string; strategy: 'content'; content: string };

export interface MergeState {
  ours: string;
  theirs: string;
  base: string | null;
  files: string[];
  resolved: string[];
  message: string;
}
