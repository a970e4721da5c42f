/** A run's numbers per variant, and the paired comparison of two variants: what report and compare print. */
import type { EvalTrialRecord } from "@crow/core";
import { median, pairedBootstrap, passAtK, passHatK, wilson } from "./stats.js";

export interface VariantSummary {
  variant: string;
  tasks: number;
  trials: number;
  passed: number;
  passRate: number;
  /** 95 % Wilson interval of the pass rate over trials. */
  interval: [number, number];
  /** Trials per task (the smallest), the k of pass@k and pass^k. */
  k: number;
  /** Mean over tasks; null when k is 1. */
  passAtK: number | null;
  passHatK: number | null;
  /** Null when no trial has a cost (no price configured). */
  cost: number | null;
  costPerSolved: number | null;
  tokens: number;
  /** Null when nothing was solved, or when no trial's provider reported tokens though requests were made. */
  tokensPerSolved: number | null;
  medianWallMs: number;
  errors: number;
}

function byKey<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(key(item)) ?? [];
    group.push(item);
    groups.set(key(item), group);
  }
  return groups;
}

/**
 * The variants of these trials: in `run`'s order (as given to `crow eval run`) when its stored config lists them,
 * then any other in order of first appearance.
 */
export function variantsOf(trials: readonly EvalTrialRecord[], run?: { config: Record<string, unknown> }): string[] {
  const present = new Set(trials.map((t) => t.variant));
  const listed = run?.config.variants;
  const given = Array.isArray(listed)
    ? listed.map((v) => (v as { label?: unknown }).label).filter((l): l is string => typeof l === "string")
    : [];
  return [...new Set([...given.filter((label) => present.has(label)), ...present])];
}

/** One variant's numbers. */
export function summarize(variant: string, trials: readonly EvalTrialRecord[]): VariantSummary {
  const mine = trials.filter((t) => t.variant === variant);
  const perTask = byKey(mine, (t) => t.task);
  const passed = mine.filter((t) => t.passed).length;
  const k = Math.min(...[...perTask.values()].map((group) => group.length));
  const meanOverTasks = (f: (n: number, c: number) => number) =>
    [...perTask.values()].reduce((sum, g) => sum + f(g.length, g.filter((t) => t.passed).length), 0) / perTask.size;
  const priced = mine.filter((t) => t.cost !== null);
  const cost = priced.length > 0 ? priced.reduce((sum, t) => sum + (t.cost ?? 0), 0) : null;
  const tokens = mine.reduce((sum, t) => sum + t.promptTokens + t.completionTokens, 0);
  // Requests made and not one token reported: the provider sends no usage, the tokens are unknown (not 0).
  const unreported = tokens === 0 && mine.some((t) => t.requests > 0);
  return {
    variant,
    tasks: perTask.size,
    trials: mine.length,
    passed,
    passRate: mine.length > 0 ? passed / mine.length : 0,
    interval: wilson(passed, mine.length),
    k,
    passAtK: k > 1 ? meanOverTasks((n, c) => passAtK(n, c, k)) : null,
    passHatK: k > 1 ? meanOverTasks((n, c) => passHatK(n, c, k)) : null,
    cost,
    costPerSolved: cost !== null && passed > 0 ? cost / passed : null,
    tokens,
    tokensPerSolved: passed > 0 && !unreported ? tokens / passed : null,
    medianWallMs: median(mine.map((t) => t.wallMs)),
    errors: mine.filter((t) => t.error !== null).length,
  };
}

export interface Comparison {
  a: string;
  b: string;
  /** Tasks both sides ran. */
  tasks: number;
  passRateA: number;
  passRateB: number;
  /** Mean over tasks of B's pass rate minus A's. */
  difference: number;
  /** 95 % paired bootstrap interval of `difference`. */
  interval: [number, number];
  /** Tasks that passed in a smaller share of their trials in B than in A. */
  regressed: string[];
  /** Tasks that passed in a larger share of their trials in B than in A. */
  fixed: string[];
  /** B is worse beyond the interval (its upper bound is below 0). */
  regression: boolean;
}

function taskRates(trials: readonly EvalTrialRecord[]): Map<string, number> {
  const rates = new Map<string, number>();
  for (const [task, group] of byKey(trials, (t) => t.task)) {
    rates.set(task, group.filter((t) => t.passed).length / group.length);
  }
  return rates;
}

/** Compares B against A task by task (tasks only one side ran are left out). */
export function compareTrials(
  a: { label: string; trials: readonly EvalTrialRecord[] },
  b: { label: string; trials: readonly EvalTrialRecord[] },
): Comparison {
  const ratesA = taskRates(a.trials);
  const ratesB = taskRates(b.trials);
  const tasks = [...ratesA.keys()].filter((task) => ratesB.has(task)).sort();
  const differences = tasks.map((task) => (ratesB.get(task) ?? 0) - (ratesA.get(task) ?? 0));
  const mean = (values: number[]) => (values.length > 0 ? values.reduce((x, y) => x + y, 0) / values.length : 0);
  const interval = pairedBootstrap(differences);
  return {
    a: a.label,
    b: b.label,
    tasks: tasks.length,
    passRateA: mean(tasks.map((task) => ratesA.get(task) ?? 0)),
    passRateB: mean(tasks.map((task) => ratesB.get(task) ?? 0)),
    difference: mean(differences),
    interval,
    // Symmetric: a task's pass rate over its trials went down, or up (0/2 → 1/2 is fixed as 2/2 → 1/2 regressed).
    regressed: tasks.filter((task) => (ratesB.get(task) ?? 0) < (ratesA.get(task) ?? 0)),
    fixed: tasks.filter((task) => (ratesB.get(task) ?? 0) > (ratesA.get(task) ?? 0)),
    regression: tasks.length > 0 && interval[1] < 0,
  };
}
