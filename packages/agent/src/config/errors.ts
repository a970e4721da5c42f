import os from "node:os";
import path from "node:path";

/**
 * An unusable configuration. The message is ready to show the user: it names the file (or variable), the key path
 * and what was expected, e.g. `~/.crow/config.yaml: models.fast.provider: unknown provider "opneai" (known: openai)`.
 * Several problems are reported together, one per line.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

/** A path for messages: the home directory shown as `~` (shorter, and the same on every machine in docs and tests). */
export function displayPath(file: string, home: string = os.homedir()): string {
  const rel = path.relative(home, file);
  if (rel === "") return "~";
  if (!rel.startsWith("..") && !path.isAbsolute(rel)) return `~/${rel}`;
  return file;
}

/** `a.b.c` for a key path; list indices as `[n]`; keys that are not identifiers quoted. */
export function keyPath(parts: readonly PropertyKey[]): string {
  let out = "";
  for (const part of parts) {
    if (typeof part === "number") out += `[${part}]`;
    else {
      const key = String(part);
      const shown = /^[\w-]+$/.test(key) ? key : JSON.stringify(key);
      out += out === "" ? shown : `.${shown}`;
    }
  }
  return out || "(top level)";
}

/**
 * Edit distance counting a swap of two neighbouring letters as one edit (optimal string alignment), for "did you
 * mean" hints on misspelled keys and names: `mokc` is one typo away from `mock`, not two.
 */
function distance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => rows[i]?.[j] ?? 0;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, at(i - 2, j - 2) + 1);
      row[j] = best;
    }
  }
  return at(a.length, b.length);
}

/** The closest candidate when it is plausibly a typo of `word` (case-insensitive, at most a third of it differs). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best !== undefined && bestDistance <= Math.max(1, Math.floor(word.length / 3)) ? best : undefined;
}

/**
 * Up to `count` candidates that look like `word`: those containing it (or contained in it) first, then the closest by
 * edit distance when at most half of it differs. Case-insensitive; for "close names" of a model id.
 */
export function nearest(word: string, candidates: readonly string[], count = 5): string[] {
  const target = word.toLowerCase();
  const tail = target.split("/").at(-1) ?? target;
  const scored = candidates.map((candidate) => {
    const lower = candidate.toLowerCase();
    const contains = lower.includes(tail) || tail.includes(lower.split("/").at(-1) ?? lower);
    const d = Math.min(distance(target, lower), distance(tail, lower.split("/").at(-1) ?? lower));
    return { candidate, score: contains ? -1 : d };
  });
  return scored
    .filter((s) => s.score < Math.max(2, Math.ceil(tail.length / 2)))
    .sort((a, b) => a.score - b.score)
    .slice(0, count)
    .map((s) => s.candidate);
}

/** Throws one `ConfigError` with each of `lines` prefixed by the file it is about. */
export function failIn(file: string, lines: string[]): never {
  throw new ConfigError(lines.map((line) => `${file}: ${line}`).join("\n"));
}
