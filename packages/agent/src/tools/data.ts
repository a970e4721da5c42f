import type { ToolCallData, ToolLocation } from "./types.js";

/** The router's {@link ToolCallData} from a `ToolResult.data` or `ToolProgress.data`, or undefined for anything else. */
export function toolCallData(data: unknown): ToolCallData | undefined {
  if (typeof data !== "object" || data === null) return undefined;
  const d = data as Record<string, unknown>;
  const ok =
    (d.content === undefined || Array.isArray(d.content)) &&
    (d.locations === undefined || Array.isArray(d.locations)) &&
    (d.terminalId === undefined || typeof d.terminalId === "string") &&
    (d.via === undefined || typeof d.via === "string");
  return ok ? (d as ToolCallData) : undefined;
}

/** The `file_path` (or `path`) argument of a file tool call, when it is an absolute path. */
export function filePathArg(args: Record<string, unknown>): string | undefined {
  const value = args.file_path ?? args.path;
  return typeof value === "string" && value.startsWith("/") ? value : undefined;
}

/**
 * Locations of a read/write/edit call, known from its arguments alone (so the ACP layer can show them as soon as the
 * call is announced): the file, at the read's `offset` line when there is one. Empty for other tools.
 */
export function locationsFor(tool: string, args: Record<string, unknown>): ToolLocation[] {
  const base = tool.slice(tool.lastIndexOf("_") + 1);
  if (base !== "read" && base !== "write" && base !== "edit") return [];
  const file = filePathArg(args);
  if (!file) return [];
  const offset = args.offset;
  if (base === "read" && typeof offset === "number" && Number.isInteger(offset) && offset > 1) {
    return [{ path: file, line: offset }];
  }
  return [{ path: file }];
}

/**
 * A short title for a tool call as editors show it: `read: /a/b.ts`, `terminal: npm test`, `ask_user: Which one?`,
 * otherwise the tool name.
 */
export function toolCallTitle(tool: string, args: Record<string, unknown>): string {
  const file = filePathArg(args);
  if (file) return `${tool}: ${file}`;
  for (const key of ["command", "query", "url", "question"]) {
    const value = args[key];
    if (typeof value === "string" && value.trim() !== "") {
      const line = value.trim().split("\n")[0] ?? "";
      return `${tool}: ${line.length > 80 ? `${line.slice(0, 79)}…` : line}`;
    }
  }
  return tool;
}
