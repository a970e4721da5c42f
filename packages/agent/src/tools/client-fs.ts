import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ToolResult } from "@crow/core";
import { countLines } from "@crow/mcp/edit";
import { DEFAULT_LINE_LIMIT, formatLines } from "@crow/mcp/read-format";
import { checkReadable, type SandboxPolicy } from "@crow/mcp/sandbox";
import { firstChangedLine } from "./diff.js";
import type { ClientBridge, ToolCallData } from "./types.js";

/** Files the editor cannot give as text: left to crow-mcp, which returns them as images. */
const IMAGE_EXTENSIONS = new Set([".png", ".jpg", ".jpeg", ".gif", ".webp"]);

function isInt(value: unknown, min: number): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= min;
}

function onlyKeys(args: Record<string, unknown>, allowed: readonly string[]): boolean {
  return Object.keys(args).every((k) => allowed.includes(k));
}

/**
 * `read` through the editor (`fs/read_text_file`), so the model sees unsaved buffers. Returns undefined to leave the
 * call to crow-mcp: arguments it would reject, images, and files the editor cannot read (crow-mcp then gives the
 * precise error, e.g. a dangling symlink, or reads the file from disk). Under the session's sandbox `policy` the
 * files the shell may not read (Crow's provider keys) are refused without asking the editor.
 */
export async function clientRead(
  client: ClientBridge,
  args: Record<string, unknown>,
  policy?: SandboxPolicy,
): Promise<ToolResult | undefined> {
  const file = args.file_path;
  const offset = args.offset ?? 1;
  const limit = args.limit ?? DEFAULT_LINE_LIMIT;
  if (typeof file !== "string" || !path.isAbsolute(file) || !isInt(offset, 0) || !isInt(limit, 1)) return undefined;
  if (!onlyKeys(args, ["file_path", "offset", "limit"]) || !client.readTextFile) return undefined;
  const normalized = path.normalize(file);
  const hidden = policy && checkReadable(normalized, policy);
  if (hidden) return { content: hidden, isError: true, data: { via: "client", locations: [{ path: normalized }] } };
  if (IMAGE_EXTENSIONS.has(path.extname(normalized).toLowerCase())) return undefined;
  let text: string;
  try {
    text = await client.readTextFile(normalized);
  } catch {
    return undefined;
  }
  if (text.includes("\0")) return undefined; // binary: crow-mcp refuses it with its usual message
  const data: ToolCallData = {
    via: "client",
    locations: [{ path: normalized, ...(offset > 1 ? { line: offset } : {}) }],
  };
  if (text.trim() === "") {
    return {
      content: `<system-reminder>\nThe file ${normalized} exists but has empty contents.\n</system-reminder>`,
      data,
    };
  }
  return { content: formatLines(text, offset, limit), data };
}

/** The current text for the diff's old side: the editor's buffer when it can read, else the disk; null if new. */
async function previousText(client: ClientBridge, file: string): Promise<string | null> {
  try {
    if (client.readTextFile) return await client.readTextFile(file);
    return await readFile(file, "utf8");
  } catch {
    return null;
  }
}

/**
 * `write` through the editor (`fs/write_text_file`): the editor applies and tracks the change. The result carries
 * a diff from the editor's previous text. Returns undefined for arguments crow-mcp would reject (it answers them).
 */
export async function clientWrite(
  client: ClientBridge,
  args: Record<string, unknown>,
): Promise<ToolResult | undefined> {
  const file = args.file_path;
  const content = args.content;
  if (typeof file !== "string" || !path.isAbsolute(file) || typeof content !== "string") return undefined;
  if (!onlyKeys(args, ["file_path", "content"]) || !client.writeTextFile) return undefined;
  const normalized = path.normalize(file);
  const before = await previousText(client, normalized);
  try {
    await client.writeTextFile(normalized, content);
  } catch (error) {
    return {
      content: `Error: Failed to write file: ${(error as Error).message ?? String(error)}`,
      isError: true,
      data: { via: "client", locations: [{ path: normalized }] },
    };
  }
  return {
    content: `Successfully wrote ${countLines(content)} lines to ${normalized}`,
    data: {
      via: "client",
      content: [{ type: "diff", path: normalized, oldText: before, newText: content }],
      locations: [{ path: normalized, line: firstChangedLine(before, content) }],
    },
  };
}
