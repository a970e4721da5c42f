/**
 * How `crow run` shows a tool's changes: colored diff lines, and a permission question with its short preview (the
 * change the tool proposed when the request carries one).
 */
import path from "node:path";
import type { ToolCallUpdate } from "@agentclientprotocol/sdk";
import { type DiffLine, unifiedDiff } from "../base/unified-diff.js";
import type { Style } from "./ansi.js";

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

/** A diff's body lines, colored (no `---`/`+++`/`@@` lines: the question names the file), at most 20. */
function diffPreview(file: string, before: string | null, after: string, s: Style): string[] {
  return unifiedDiff(file, before, after, { maxLines: 20 })
    .filter((l) => l.kind !== "header" && l.kind !== "hunk")
    .map((l) => styledDiffLine(l, s));
}

/**
 * A short look at what a permission would allow: the change the tool proposed (its dry run's diff, in the request's
 * content), else from the arguments: the command, the edit as a diff, or the new file's start.
 */
export function permissionPreview(call: ToolCallUpdate, s: Style): string[] {
  for (const part of call.content ?? []) {
    if (part.type === "diff") return diffPreview(path.basename(part.path), part.oldText ?? null, part.newText, s);
  }
  const raw = call.rawInput;
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
  if (typeof args.old_string === "string" && typeof args.new_string === "string") {
    return diffPreview(name, args.old_string, args.new_string, s);
  }
  if (typeof args.content === "string") return diffPreview(name, null, args.content, s);
  const json = JSON.stringify(args);
  return json === "{}" ? [] : [s.dim(json.length > 200 ? `${json.slice(0, 199)}…` : json)];
}

/**
 * A permission question's lines (before the answer keys): `Allow <title>?`, why the agent asks when the mode alone
 * would not (a permission rule, a repeated call: the call's text content), then the preview. A command is shown
 * once, as a command line: not also in the title (`terminal: <command>` reads `terminal`) nor as the fenced block
 * the agent adds for editors.
 */
export function permissionQuestionLines(call: ToolCallUpdate, title: string, s: Style): string[] {
  const command = commandOf(call.rawInput);
  const lines = [`${s.yellow("?")} ${s.bold(`Allow ${withoutCommand(title, command)}?`)}`];
  for (const part of call.content ?? []) {
    if (part.type !== "content" || part.content.type !== "text") continue;
    if (command !== undefined && fencedBody(part.content.text) === command) continue;
    lines.push(`  ${s.dim(part.content.text)}`);
  }
  for (const line of permissionPreview(call, s)) lines.push(`  ${line}`);
  return lines;
}

/** The command a call runs (a terminal call's `command`), if it is one. */
function commandOf(raw: unknown): string | undefined {
  const command = (raw as { command?: unknown } | null | undefined)?.command;
  return typeof command === "string" && command.trim() !== "" ? command : undefined;
}

/** A title like `terminal: <the command>` as `terminal`: the question shows the command below it. */
function withoutCommand(title: string, command: string | undefined): string {
  const colon = title.indexOf(": ");
  if (command === undefined || colon <= 0) return title;
  const rest = title.slice(colon + 2).replace(/…$/, "");
  const firstLine = command.split("\n")[0] ?? command;
  return command.startsWith(rest) || rest.startsWith(firstLine) ? title.slice(0, colon) : title;
}

/** The body of a text that is one Markdown code fence (```sh …```), else undefined. */
function fencedBody(text: string): string | undefined {
  return /^```[\w-]*\n([\s\S]*)\n```\s*$/.exec(text)?.[1];
}
