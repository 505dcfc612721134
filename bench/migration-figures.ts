/**
 * bench:migration's figures (./migration.bench.ts): what one migration task and one round measure,
 * each figure's median over the rounds, and the final JSON line with its table and goals (issue
 * 30's four figures, issue 50's rerun figures: the default rerun verifying each unchanged
 * dashboard's target again, and `verification: "if_changed"` carrying the last verification).
 */

/**
 * One migration task's wall time, the verification's part of it as the task reports it, how many
 * dashboards it left unchanged, and the CPU seconds each part of the stack spent meanwhile.
 */
export type Migrated = {
  seconds: number;
  verificationSeconds: number;
  unchanged: number;
  /** Items whose verification this task made, and those that carried an earlier one (issue 50's verification states). */
  verified: number;
  carried: number;
  cpu: Record<string, number>;
};
export type Growth = {
  switchyard_s: number;
  verification_s: number;
  bare_s: number;
  factor: number;
  bare_factor: number;
  rerun_s: number;
  rerun_if_changed_s: number;
};
/**
 * One round: Switchyard's migration of N dashboards, its rerun (target verified again), its rerun
 * with `verification: "if_changed"`, and the bare calls' copy of the same N (its time and CPU seconds).
 */
export type Round = { first: Migrated; again: Migrated; ifChanged: Migrated; bare: number; bareCpu: Record<string, number> };
export type Figures = {
  rounds: Round[];
  presetCli: number | null;
  growth: Growth | null;
  /** The 1-minute load average when the bench started and when it ended (the machine is shared). */
  load: [number, number];
  /** What each contender's warm-up copy of W dashboards took (null without one). */
  warmUp: { switchyard: Migrated; bare: number } | null;
};

/** A round's four figures (issue 30's table, bar the 1,000-dashboard one) and its times. */
export function roundFigures({ first, again, ifChanged, bare }: Round) {
  return {
    bare_s: bare,
    switchyard_s: first.seconds - first.verificationSeconds,
    verification_s: first.verificationSeconds,
    rerun_s: again.seconds,
    rerun_if_changed_s: ifChanged.seconds,
    ratio: (first.seconds - first.verificationSeconds) / bare,
    ratio_with_verification: first.seconds / bare,
    rerun_ratio: again.seconds / bare,
    rerun_if_changed_ratio: ifChanged.seconds / bare,
  };
}
export type RoundFigures = ReturnType<typeof roundFigures>;

/** Each figure's median over the rounds (R is odd by default: a round's own value). */
export function medians(rounds: Round[]): RoundFigures & { unchanged: number; reverified: number; carried: number; middle: Round } {
  const each = rounds.map(roundFigures);
  const median = (k: keyof RoundFigures) => {
    const v = each.map((e) => e[k]).sort((x, y) => x - y);
    const m = Math.floor(v.length / 2);
    return v.length % 2 ? v[m]! : (v[m - 1]! + v[m]!) / 2;
  };
  const out = Object.fromEntries((Object.keys(each[0]!) as Array<keyof RoundFigures>).map((k) => [k, median(k)])) as RoundFigures;
  // The CPU seconds of the round whose ratio is the median (the one nearest it, with an even R).
  const middle = rounds.reduce((best, r) =>
    Math.abs(roundFigures(r).ratio - out.ratio) < Math.abs(roundFigures(best).ratio - out.ratio) ? r : best,
  );
  return {
    ...out,
    unchanged: Math.min(...rounds.map((r) => r.again.unchanged)),
    reverified: Math.min(...rounds.map((r) => r.again.verified)),
    carried: Math.min(...rounds.map((r) => r.ifChanged.carried)),
    middle,
  };
}

/** The final JSON line. */
export function summary({ rounds, presetCli, growth, load, warmUp }: Figures, run: { N: number; G: number; W: number; DISTINCT: boolean }) {
  const { N, G, W, DISTINCT } = run;
  const m = medians(rounds);
  const r = (n: number) => Math.round(n * 1000) / 1000;
  const bare = m.bare_s;
  // Issue 30's table: without verification, with it (source and target checks), 1,000 dashboards with it, the rerun.
  const { table, goals } = tableAndGoals(m, growth, G);
  return {
    dashboards: N,
    distinct_charts: DISTINCT,
    warm_up: W,
    warm_up_s: warmUp ? { switchyard: r(warmUp.switchyard.seconds), bare: r(warmUp.bare) } : null,
    rounds: rounds.map((round) => Object.fromEntries(Object.entries(roundFigures(round)).map(([k, v]) => [k, r(v)]))),
    bare_s: r(bare),
    switchyard_s: r(m.switchyard_s),
    verification_s: r(m.verification_s),
    rerun_s: r(m.rerun_s),
    rerun_if_changed_s: r(m.rerun_if_changed_s),
    preset_cli_s: presetCli === null ? null : r(presetCli),
    ratio: table.ratio,
    ratio_with_verification: table.ratio_with_verification,
    rerun_ratio: table.rerun_ratio,
    rerun_if_changed_ratio: table.rerun_if_changed_ratio,
    growth_rerun_ratio: table.growth_rerun_ratio,
    growth_rerun_if_changed_ratio: table.growth_rerun_if_changed_ratio,
    ...(growth
      ? {
          growth_to: G,
          growth_switchyard_s: r(growth.switchyard_s - growth.verification_s),
          growth_verification_s: r(growth.verification_s),
          growth_bare_s: r(growth.bare_s),
          growth_rerun_s: r(growth.rerun_s),
          growth_rerun_if_changed_s: r(growth.rerun_if_changed_s),
          growth_ratio: r((growth.switchyard_s - growth.verification_s) / growth.bare_s),
          growth_ratio_with_verification: r(growth.switchyard_s / growth.bare_s),
          growth_factor: r(growth.factor),
          growth_bare_factor: r(growth.bare_factor),
        }
      : {}),
    table,
    goals,
    load: load.map((l) => Math.round(l * 100) / 100),
    cpu_s: {
      first: m.middle.first.cpu,
      rerun: m.middle.again.cpu,
      rerun_if_changed: m.middle.ifChanged.cpu,
      bare: m.middle.bareCpu,
      ...(warmUp ? { warm_up: warmUp.switchyard.cpu } : {}),
    },
  };
}

/** Issue 30's table and issue 50's rerun figures, and whether each meets its goal (a 1,000-dashboard one: null below --growth 1000). */
function tableAndGoals(m: ReturnType<typeof medians>, growth: Growth | null, G: number) {
  const r = (n: number) => Math.round(n * 1000) / 1000;
  const table = {
    ratio: r(m.ratio),
    ratio_with_verification: r(m.ratio_with_verification),
    ratio_with_verification_1000: growth && G >= 1000 ? r(growth.switchyard_s / growth.bare_s) : null,
    rerun_ratio: r(m.rerun_ratio),
    // Issue 50: the default rerun verifies each unchanged dashboard's target again; if_changed carries the last verification.
    rerun_if_changed_ratio: r(m.rerun_if_changed_ratio),
    growth_rerun_ratio: growth ? r(growth.rerun_s / growth.bare_s) : null,
    growth_rerun_if_changed_ratio: growth ? r(growth.rerun_if_changed_s / growth.bare_s) : null,
  };
  const atScale = (v: number | null, goal: number) => (v === null || G < 1000 ? null : v <= goal);
  const goals = {
    ratio: table.ratio <= 1.2,
    // Issue 50's goals with verification: <= 1.3x bare at 10, <= 0.9x at 1,000 (issue 30's were 1.5x and 1.0x).
    ratio_with_verification: table.ratio_with_verification <= 1.3,
    ratio_with_verification_1000: table.ratio_with_verification_1000 === null ? null : table.ratio_with_verification_1000 <= 0.9,
    // Issue 50's rerun goals: <= 1.0x bare at 10 (target verified again), <= 0.6x at 1,000; if_changed <= 0.8x at 10, <= 0.3x at 1,000.
    rerun_ratio: table.rerun_ratio <= 1.0,
    rerun_if_changed_ratio: table.rerun_if_changed_ratio <= 0.8,
    growth_rerun_ratio: atScale(table.growth_rerun_ratio, 0.6),
    growth_rerun_if_changed_ratio: atScale(table.growth_rerun_if_changed_ratio, 0.3),
  };
  return { table, goals };
}
