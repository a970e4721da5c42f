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

/** Levenshtein distance, for "did you mean" hints on misspelled keys and names. */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0] as number;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j] as number;
      row[j] = Math.min(above + 1, (row[j - 1] as number) + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length] as number;
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
