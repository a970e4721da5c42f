import { closeSync } from "node:fs";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { errorText } from "../error-text.js";
import { type OpenedFile, openForRead, readOpened } from "../fs/held.js";
import { checkAbsolutePath, describeMissing, errorCode, isPermissionError } from "../fs/paths.js";
import { classifyHead, decodeUtf8, sniffImage } from "../fs/sniff.js";
import { afterRead } from "../lsp/index.js";
import { DEFAULT_LINE_LIMIT, formatLines, MAX_LINE_LENGTH } from "../read-format.js";
import { hostPath } from "../sandbox/binds.js";
import { checkOpenedReadable } from "../sandbox/hidden.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { errorResult, guarded, textResult } from "./result.js";

export { DEFAULT_LINE_LIMIT, formatLines, MAX_LINE_LENGTH };

export const BINARY_CHECK_SIZE = 8192;
export const MAX_FILE_SIZE = 10 * 1024 * 1024;

// Lean: what a model needs to call it. Limits and edge cases are in the results and errors that meet them (a cut
// file says which offset to use next; a binary or huge file's error says to use the terminal). The second sentence
// is how a model gets line numbers when it wants them (read-format.ts says why a whole file comes without).
const DESCRIPTION = "Read a text file or an image. With offset or limit, lines are numbered.";

const inputSchema = z.strictObject({
  file_path: z.string().describe("Absolute path"),
  offset: z.number().int().min(0).optional().describe("First line, 1-based"),
  limit: z.number().int().min(1).optional().describe("Lines to read"),
});

/** Registers `read(file_path, offset=1, limit=2000)`: lines numbered when `offset` or `limit` is given. */
export function registerReadTool(server: McpServer, context: ToolContext): void {
  server.registerTool(
    "read",
    {
      title: "Read file",
      description: DESCRIPTION,
      inputSchema,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    guarded("read", async (args, extra) => {
      const badPolicy = takeCallPolicy(context, extra._meta);
      if (badPolicy) return errorResult(badPolicy);
      const result = await readFile(
        args.file_path,
        args.offset ?? 1,
        args.limit ?? DEFAULT_LINE_LIMIT,
        context.cwd,
        context.sandbox.current,
        args.offset !== undefined || args.limit !== undefined,
      );
      afterRead(context, args.file_path, result);
      return result;
    }),
  );
}

/**
 * The read tool's behaviour, independent of MCP: the result the model sees for one call, its lines `numbered` or not
 * (see `formatLines`; the tool numbers them when the call gave `offset` or `limit`). Under a sandbox `policy`
 * the files the shell may not read (Crow's provider keys) are refused here too. The file is opened first and every
 * check is made on the open descriptor (what it is, where it really is, its inode), then read from it: a link
 * swapped after the check cannot lead the read elsewhere.
 */
export async function readFile(
  filePath: string,
  offset: number,
  limit: number,
  cwd: string,
  policy?: SandboxPolicy,
  numbered = true,
): Promise<CallToolResult> {
  const checked = checkAbsolutePath(filePath, cwd);
  if (!checked.ok) return errorResult(checked.error);
  const file = hostPath(checked.path, policy);

  let opened: OpenedFile;
  try {
    opened = openForRead(file);
  } catch (error) {
    if (errorCode(error) === "ENOENT")
      return errorResult(`Error: File does not exist: ${file}${await describeMissing(file)}`);
    if (errorCode(error) === "ENOTDIR")
      return errorResult(`Error: File does not exist: ${file} (a parent is not a directory)`);
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Cannot open file: ${errorText(error)}`);
  }
  let bytes: Buffer;
  try {
    const hidden = policy && checkOpenedReadable(file, opened, policy);
    if (hidden) return errorResult(hidden);
    if (opened.stats.isDirectory()) return errorResult(`Error: Path is a directory, not a file: ${file}`);
    if (!opened.stats.isFile()) return errorResult(`Error: Not a regular file: ${file}`);
    if (opened.stats.size > MAX_FILE_SIZE) return errorResult(tooLarge(opened.stats.size));
    bytes = await readOpened(opened, MAX_FILE_SIZE);
    if (bytes.length > MAX_FILE_SIZE) return errorResult(tooLarge(bytes.length));
  } catch (error) {
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Failed to read file: ${errorText(error)}`);
  } finally {
    closeSync(opened.fd);
  }

  const image = sniffImage(bytes.subarray(0, 16));
  if (image) {
    return {
      content: [
        { type: "text", text: `Image file: ${file} (${image}, ${bytes.length} bytes)` },
        { type: "image", data: bytes.toString("base64"), mimeType: image },
      ],
    };
  }
  const kind = classifyHead(bytes.subarray(0, BINARY_CHECK_SIZE));
  if (kind === "binary")
    return errorResult(`Error: Cannot read binary file: ${file}. Use the terminal (head, grep, xxd) to look at it.`);
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    return errorResult(
      `Error: File is not valid UTF-8 text: ${file} (first invalid byte on line ${decoded.line}). It may use another encoding such as Latin-1; inspect it with the terminal (file, iconv).`,
    );
  }
  if (decoded.text.trim() === "") {
    return textResult(`<system-reminder>\nThe file ${file} exists but has empty contents.\n</system-reminder>`);
  }
  return textResult(formatLines(decoded.text, offset, limit, numbered));
}

function tooLarge(size: number): string {
  return `Error: File too large: ${size} bytes (max ${MAX_FILE_SIZE} bytes). Use the terminal (head, tail, grep, sed -n) to look at parts of it.`;
}
