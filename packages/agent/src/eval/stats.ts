/** The statistics of `crow eval report` and `compare`: intervals, pass@k, pass^k, medians, a paired bootstrap. */

/** z for a two-sided 95 % interval. */
const Z95 = 1.959964;

/** Wilson score interval of `passes` out of `n` (95 %); [0, 1] when n is 0. */
export function wilson(passes: number, n: number): [number, number] {
  if (n === 0) return [0, 1];
  const p = passes / n;
  const z2 = Z95 * Z95;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (Z95 * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / (1 + z2 / n);
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** n choose k as a float (small n). */
function choose(n: number, k: number): number {
  if (k < 0 || k > n) return 0;
  let result = 1;
  for (let i = 0; i < k; i++) result = (result * (n - i)) / (i + 1);
  return result;
}

/** Unbiased pass@k of one task with `c` passes out of `n` trials: the chance that some of k samples passes. */
export function passAtK(n: number, c: number, k: number): number {
  if (n - c < k) return 1;
  return 1 - choose(n - c, k) / choose(n, k);
}

/** pass^k of one task: the chance that all of k samples pass. */
export function passHatK(n: number, c: number, k: number): number {
  return choose(n, k) === 0 ? 0 : choose(c, k) / choose(n, k);
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** A small seeded generator (mulberry32): the same data gives the same interval on every run. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * 95 % paired bootstrap interval of the mean of per-task differences (B − A): tasks are resampled with replacement,
 * so a task's two results stay together.
 */
export function pairedBootstrap(differences: readonly number[], iterations = 4000, seed = 1): [number, number] {
  const n = differences.length;
  if (n === 0) return [0, 0];
  const random = seeded(seed);
  const means: number[] = [];
  for (let i = 0; i < iterations; i++) {
    let sum = 0;
    for (let j = 0; j < n; j++) sum += differences[Math.floor(random() * n)] ?? 0;
    means.push(sum / n);
  }
  means.sort((a, b) => a - b);
  return [means[Math.floor(iterations * 0.025)] ?? 0, means[Math.ceil(iterations * 0.975) - 1] ?? 0];
}
