/** The deployment smoke test's input and per-step result. */
export interface SelfcheckInput {
  /** Seconds the sleep step lasts (heartbeating), so tests can kill a worker mid-task. */
  sleepSeconds: number;
  /** 'retryable': the fail step throws on its first `failAttempts` attempts, then passes. */
  fail: 'none' | 'retryable' | 'non_retryable';
  failAttempts: number;
}

export interface SelfcheckStepResult {
  step: string;
  ok: boolean;
  detail: string;
  attempt: number;
}
