/** How `crow run` shows a tool's changes: colored diff lines, and the short preview under a permission question. */
import path from "node:path";
import type { Style } from "./ansi.js";
import { type DiffLine, unifiedDiff } from "./diff.js";

/** One diff line in its color (added green, removed red, hunk cyan, header bold, note dim). */
export function styledDiffLine(line: DiffLine, s: Style): string {
  switch (line.kind) {
    case "add":
      return s.green(line.text);
    case "remove":
      return s.red(line.text);
    case "hunk":
      return s.cyan(line.text);
    case "header":
      return s.bold(line.text);
    case "note":
      return s.dim(line.text);
    default:
      return line.text;
  }
}

/** A short look at what a permission would allow: the command, the edit as a diff, or the new file's start. */
export function permissionPreview(raw: unknown, s: Style): string[] {
  if (typeof raw !== "object" || raw === null) return [];
  const args = raw as Record<string, unknown>;
  const file = typeof args.file_path === "string" ? args.file_path : typeof args.path === "string" ? args.path : "";
  const name = file ? path.basename(file) : "file";
  if (typeof args.command === "string") {
    return args.command
      .split("\n")
      .slice(0, 5)
      .map((l) => s.cyan(`$ ${l}`));
  }
  let diff: DiffLine[] = [];
  if (typeof args.old_string === "string" && typeof args.new_string === "string") {
    diff = unifiedDiff(name, args.old_string, args.new_string, { maxLines: 20 });
  } else if (typeof args.content === "string") {
    diff = unifiedDiff(name, null, args.content, { maxLines: 20 });
  }
  if (diff.length > 0)
    return diff.filter((l) => l.kind !== "header" && l.kind !== "hunk").map((l) => styledDiffLine(l, s));
  const json = JSON.stringify(args);
  return json === "{}" ? [] : [s.dim(json.length > 200 ? `${json.slice(0, 199)}…` : json)];
}
