// Under CI=true nothing a test needs may be left out (issue 48): the skip switches are refused
// before anything starts (test/global-setup.ts), and a missing part fails with its name.
import { describe, expect, it, vi } from 'vitest';
import { available, inCi, refuseSkipSwitchesInCi, SKIP_SWITCHES } from '../support/ci.ts';

describe('CI leaves nothing out', () => {
  it('refuses every skip switch under CI=true, naming it, and none locally', () => {
    for (const name of SKIP_SWITCHES) {
      expect(() => refuseSkipSwitchesInCi({ CI: 'true', [name]: 'off' }), name).toThrow(new RegExp(`${name}=off is refused`));
      expect(() => refuseSkipSwitchesInCi({ [name]: 'off' }), name).not.toThrow();
    }
    expect(() => refuseSkipSwitchesInCi({ CI: '1', SWITCHYARD_TEST_SUPERSET: 'off', SWITCHYARD_TEST_GITEA: 'off' })).toThrow(
      /SWITCHYARD_TEST_SUPERSET=off, SWITCHYARD_TEST_GITEA=off is refused/,
    );
    expect(() => refuseSkipSwitchesInCi({ CI: 'true' })).not.toThrow();
    expect([inCi({ CI: 'true' }), inCi({ CI: '1' }), inCi({ CI: 'false' }), inCi({})]).toEqual([true, true, false, false]);
  });

  it('fails on a missing part under CI=true with its name, and skips it locally with a warning', () => {
    expect(() => available('openssl', false, 'install it', { CI: 'true' })).toThrow(/^openssl is missing: install it \(CI=true/);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      expect(available('openssl', false, 'install it', {})).toBe(false);
      expect(warn).toHaveBeenCalledWith('openssl is missing: install it; the tests that need it are skipped');
    } finally {
      warn.mockRestore();
    }
    expect(available('openssl', true, 'install it', { CI: 'true' })).toBe(true);
  });
});
