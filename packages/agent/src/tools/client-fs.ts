import { readFile } from "node:fs/promises";
import path from "node:path";
import type { ToolDiff, ToolDisplay, ToolResult } from "@crow/core";
import { errorText } from "@crow/core";
import { countLines } from "@crow/mcp/edit";
import { DEFAULT_LINE_LIMIT, formatLines } from "@crow/mcp/read-format";
import { checkReadable, type SandboxPolicy, showsHiddenContent } from "@crow/mcp/sandbox";
import type { ClientBridge } from "./client-types.js";
import { diffDisplay } from "./diff.js";

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
 * files the shell may not read (Crow's provider keys) are refused without asking the editor, and an answer that holds
 * one's content (a link swapped after the check) is left to crow-mcp, which checks the file it opened.
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
  if (hidden) return { content: hidden, isError: true, display: { via: "client", locations: [{ path: normalized }] } };
  if (IMAGE_EXTENSIONS.has(path.extname(normalized).toLowerCase())) return undefined;
  let text: string;
  try {
    text = await client.readTextFile(normalized);
  } catch {
    return undefined;
  }
  if (text.includes("\0")) return undefined; // binary (or an environment): crow-mcp decides on what it opens
  // The editor opened the path after the check above: a racing link may have led it to a hidden file. Then crow-mcp
  // reads it instead, deciding on the descriptor it opened.
  if (policy && showsHiddenContent(text, policy)) return undefined;
  const display: ToolDisplay = {
    via: "client",
    locations: [{ path: normalized, ...(offset > 1 ? { line: offset } : {}) }],
  };
  if (text.trim() === "") {
    return {
      content: `<system-reminder>\nThe file ${normalized} exists but has empty contents.\n</system-reminder>`,
      display,
    };
  }
  // Numbered as crow-mcp's read numbers them: when the call gave offset or limit.
  const numbered = (args.offset ?? args.limit ?? undefined) !== undefined;
  return { content: formatLines(text, offset, limit, numbered), display };
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

/** The file and content of a write crow-mcp would accept, with a normalized path; undefined for anything else. */
function writeArgs(args: Record<string, unknown>): { file: string; content: string } | undefined {
  const file = args.file_path;
  const content = args.content;
  if (typeof file !== "string" || !path.isAbsolute(file) || typeof content !== "string") return undefined;
  if (!onlyKeys(args, ["file_path", "content"])) return undefined;
  return { file: path.normalize(file), content };
}

/**
 * `write` through the editor (`fs/write_text_file`): the editor applies and tracks the change. The result carries
 * a diff from the editor's previous text. Returns undefined for arguments crow-mcp would reject (it answers them).
 */
export async function clientWrite(
  client: ClientBridge,
  args: Record<string, unknown>,
): Promise<ToolResult | undefined> {
  // The change it proposes is the change it makes.
  const change = await previewClientWrite(client, args);
  if (!change || !client.writeTextFile) return undefined;
  const { path: file, newText: content } = change;
  try {
    await client.writeTextFile(file, content);
  } catch (error) {
    return {
      content: `Error: Failed to write file: ${errorText(error)}`,
      isError: true,
      display: { via: "client", locations: [{ path: file }] },
    };
  }
  return {
    content: `Successfully wrote ${countLines(content)} lines to ${file}`,
    display: { via: "client", ...diffDisplay(change) },
  };
}

/**
 * What a write through the editor would change, for the permission question: the editor's text (else the disk's,
 * which is the editor's machine) against the new content. Undefined for arguments {@link clientWrite} leaves to crow-mcp.
 */
export async function previewClientWrite(
  client: ClientBridge,
  args: Record<string, unknown>,
): Promise<ToolDiff | undefined> {
  const write = writeArgs(args);
  if (!write || !client.writeTextFile) return undefined;
  return { path: write.file, oldText: await previousText(client, write.file), newText: write.content };
}
