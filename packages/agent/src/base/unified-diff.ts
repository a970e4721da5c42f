/**
 * Unified diffs of a tool call's change (`oldText` → `newText`) as `---`/`+++`/`@@` lines, for the two places that
 * draw one: `crow run` at the terminal and the session viewer's tool cards (a leaf of base/, so neither room reaches
 * into the other). A small Myers line diff after trimming the common head and tail; past an edit distance cap the changed
 * middle is shown as one removal plus one addition (still correct, just not minimal).
 */

import { splitLines } from "@crow/util";

/** One line of a diff body. */
export interface DiffLine {
  kind: "context" | "add" | "remove" | "hunk" | "header" | "note";
  text: string;
}

export interface DiffOptions {
  /** Unchanged lines around each change (default 3). */
  context?: number;
  /** Body lines shown before the rest is summarised (default 80). */
  maxLines?: number;
}

type Op = { kind: "context" | "add" | "remove"; text: string; a: number; b: number };

const MAX_EDIT_DISTANCE = 1000;

/** Myers' greedy diff of `a` and `b`, or undefined when they differ in more than `MAX_EDIT_DISTANCE` lines. */
function myers(a: readonly string[], b: readonly string[]): Array<"=" | "-" | "+"> | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, MAX_EDIT_DISTANCE);
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      let x =
        k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0))
          ? (v[offset + k + 1] ?? 0)
          : (v[offset + k - 1] ?? 0) + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) return backtrack(trace, offset, n, m, d);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], offset: number, n: number, m: number, depth: number): Array<"=" | "-" | "+"> {
  const ops: Array<"=" | "-" | "+"> = [];
  let x = n;
  let y = m;
  for (let d = depth; d > 0; d--) {
    const v = trace[d] as Int32Array;
    const k = x - y;
    const down = k === -d || (k !== d && (v[offset + k - 1] ?? 0) < (v[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = v[offset + prevK] ?? 0;
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push("=");
      x--;
      y--;
    }
    ops.push(down ? "+" : "-");
    if (down) y--;
    else x--;
  }
  while (x > 0 && y > 0) {
    ops.push("=");
    x--;
    y--;
  }
  return ops.reverse();
}

/** The edit script from `before` to `after` as context/add/remove ops with 0-based line numbers on each side. */
function diffOps(before: readonly string[], after: readonly string[]): Op[] {
  let head = 0;
  while (head < before.length && head < after.length && before[head] === after[head]) head++;
  let tail = 0;
  while (
    tail < before.length - head &&
    tail < after.length - head &&
    before[before.length - 1 - tail] === after[after.length - 1 - tail]
  )
    tail++;
  const a = before.slice(head, before.length - tail);
  const b = after.slice(head, after.length - tail);
  const script = myers(a, b) ?? [...a.map(() => "-" as const), ...b.map(() => "+" as const)];
  const ops: Op[] = [];
  for (let i = 0; i < head; i++) ops.push({ kind: "context", text: before[i] ?? "", a: i, b: i });
  let x = head;
  let y = head;
  for (const step of script) {
    if (step === "=") ops.push({ kind: "context", text: before[x] ?? "", a: x++, b: y++ });
    else if (step === "-") ops.push({ kind: "remove", text: before[x] ?? "", a: x++, b: y });
    else ops.push({ kind: "add", text: after[y] ?? "", a: x, b: y++ });
  }
  for (let i = 0; i < tail; i++) {
    ops.push({ kind: "context", text: before[x] ?? "", a: x++, b: y++ });
  }
  return ops;
}

const range = (start: number, count: number) =>
  count === 1 ? `${start}` : `${count === 0 ? start - 1 : start},${count}`;

/**
 * The unified diff of one file. `before` is null (or undefined) for a new file. Returns header, hunk and body lines;
 * an unchanged file gives only a note.
 */
export function unifiedDiff(
  file: string,
  before: string | null | undefined,
  after: string,
  options: DiffOptions = {},
): DiffLine[] {
  const context = options.context ?? 3;
  const maxLines = options.maxLines ?? 80;
  const ops = diffOps(splitLines(before ?? ""), splitLines(after));
  const changed = ops.map((op, i) => (op.kind === "context" ? -1 : i)).filter((i) => i >= 0);
  // git's a/ and b/ prefix a relative path; an absolute one (the viewer's) is shown as it is, not as `a//tmp/…`.
  const [a, b] = file.startsWith("/") ? ["", ""] : ["a/", "b/"];
  const out: DiffLine[] = [
    { kind: "header", text: `--- ${before == null ? "/dev/null" : `${a}${file}`}` },
    { kind: "header", text: `+++ ${b}${file}` },
  ];
  if (changed.length === 0) return [{ kind: "note", text: `${file}: no changes` }];
  let body = 0;
  let shown = 0;
  let i = 0;
  while (i < changed.length) {
    const first = changed[i] as number;
    let j = i;
    while (j + 1 < changed.length && (changed[j + 1] as number) - (changed[j] as number) <= 2 * context + 1) j++;
    const last = changed[j] as number;
    const from = Math.max(0, first - context);
    const to = Math.min(ops.length - 1, last + context);
    const slice = ops.slice(from, to + 1);
    const start = slice[0] as Op;
    const aCount = slice.filter((op) => op.kind !== "add").length;
    const bCount = slice.filter((op) => op.kind !== "remove").length;
    out.push({ kind: "hunk", text: `@@ -${range(start.a + 1, aCount)} +${range(start.b + 1, bCount)} @@` });
    for (const op of slice) {
      body++;
      if (shown >= maxLines) continue;
      shown++;
      const sign = op.kind === "add" ? "+" : op.kind === "remove" ? "-" : " ";
      out.push({ kind: op.kind, text: `${sign}${op.text}` });
    }
    i = j + 1;
  }
  if (body > shown) out.push({ kind: "note", text: `… ${body - shown} more diff lines` });
  return out;
}
