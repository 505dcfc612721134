import { describe, expect, it } from 'vitest';
import { untilBranchesOnServer } from '../../lib/git/branch-on-server.ts';
import { GitProviderError } from '../../lib/git/providers.ts';
import type { ReviewProvider } from '../../lib/git/reviews.ts';

// The wait of a pull request for the server's API to answer its branches, on a provider whose
// answers are scripted: a real Gitea's lag behind a push cannot be produced on demand (the test
// against it is push-settled.test.ts). Only branchHead is called.
function scripted(answers: Record<string, Array<string | null | Error>>): ReviewProvider & { calls: string[] } {
  const calls: string[] = [];
  const branchHead = async (name: string) => {
    calls.push(name);
    const queue = answers[name]!;
    const next = queue.length > 1 ? queue.shift()! : queue[0]!;
    if (next instanceof Error) throw next;
    return next;
  };
  return { calls, branchHead } as unknown as ReviewProvider & { calls: string[] };
}

describe('a pull request waits for the server to answer its branches', () => {
  it('asks again while a branch is missing or at another commit, and ends when both are answered', async () => {
    const p = scripted({ feature: [null, 'old', 'c1'], main: [null, 'm'] });
    await untilBranchesOnServer(p, [{ name: 'feature', commit: 'c1' }, { name: 'main' }]);
    expect(p.calls.filter((n) => n === 'feature')).toHaveLength(3);
    expect(p.calls.filter((n) => n === 'main')).toHaveLength(3);
  });

  it('says which branch the server does not answer once its bound is past (409 branch_not_on_server)', async () => {
    const p = scripted({ feature: [null], main: ['m'] });
    await expect(untilBranchesOnServer(p, [{ name: 'feature', commit: 'c1' }, { name: 'main' }], 0)).rejects.toMatchObject({
      status: 409,
      code: 'branch_not_on_server',
      extra: { branches: ['feature'] },
    });
  });

  it('passes on a refusal that is not "not yet" (a refused token) at once', async () => {
    const refused = new GitProviderError('gitea', 'reading a branch', 'HTTP 401', 401);
    const p = scripted({ feature: [refused] });
    await expect(untilBranchesOnServer(p, [{ name: 'feature' }])).rejects.toBe(refused);
    expect(p.calls).toEqual(['feature']);
  });
});
