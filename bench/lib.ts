import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Percentiles of a list of durations in milliseconds. */
export interface Timing {
  runs: number;
  p50: number;
  p95: number;
  min: number;
  max: number;
}

/** Runs `fn` `warmup` times unmeasured, then `runs` times, and returns the timing percentiles (ms). */
export async function measure(fn: () => unknown | Promise<unknown>, runs = 50, warmup = 5): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return summarize(samples);
}

/**
 * Like {@link measure}, but `fn` reports the span itself (ms) — for runs whose setup or teardown (spawning, closing a
 * process) must not count.
 */
export async function measureSpan(fn: () => Promise<number>, runs = 50, warmup = 5): Promise<Timing> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) samples.push(await fn());
  return summarize(samples);
}

/**
 * Runs one case of a benchmark; a failure (above all a spawned agent that died: testkit's AgentExitError says how and
 * quotes its stderr) is rethrown naming the case, so a crash under load says where it happened.
 */
export async function benchCase<T>(name: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new Error(`case "${name}" failed: ${why}`, { cause: error });
  }
}

/** Percentiles of samples in milliseconds. */
export function summarize(samples: number[]): Timing {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  return {
    runs: sorted.length,
    p50: at(0.5),
    p95: at(0.95),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Formats a timing as "p50 1.23 ms  p95 2.34 ms". */
export function formatTiming(t: Timing): string {
  return `p50 ${t.p50.toFixed(2)} ms  p95 ${t.p95.toFixed(2)} ms  (${t.runs} runs)`;
}

/** Writes a benchmark's results to bench/reports/<name>.json (plus a timestamp and the machine) and prints where. */
export function writeReport(name: string, results: Record<string, unknown>): void {
  const dir = path.join(import.meta.dirname, "reports");
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  const report = {
    name,
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    results,
  };
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  console.log(`report written to ${path.relative(process.cwd(), file)}`);
}
