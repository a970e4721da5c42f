import { closeSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import {
  countLines,
  DRY_RUN_META_KEY,
  DRY_RUN_NOTE,
  diffMeta,
  editTextAsync,
  fileLocks,
  hasBom,
  isDryRun,
  MAX_EDIT_FILE_SIZE,
  tooLargeToEdit,
} from "../edit/index.js";
import { errorText } from "../error-text.js";
import { type Located, openLocated, readOpened } from "../fs/held.js";
import { checkAbsolutePath, describeMissing, errorCode, isPermissionError } from "../fs/paths.js";
import { classifyHead, decodeUtf8 } from "../fs/sniff.js";
import { appendDiagnostics } from "../lsp/index.js";
import { hostPath } from "../sandbox/binds.js";
import { checkOpenedReadable } from "../sandbox/hidden.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { checkWritableAt } from "../sandbox/roots.js";
import { errorResult, guarded, textResult } from "./result.js";
import { locateFile, saveAt } from "./save.js";

/** Two edits of one file sent in parallel (models do that) both land: see {@link fileLocks}. */
const withFileLock = fileLocks();

// Lean: the contract only. The matching's tolerance, CRLF/BOM and re-indentation need no instructions; an edit that
// does not match says why and shows the closest lines.
const DESCRIPTION =
  "Replace old_string with new_string in a file. old_string must match one place exactly (read the file first), or set replace_all. An empty old_string creates a new file.";

const inputSchema = z.strictObject({
  file_path: z.string().describe("Absolute path"),
  old_string: z.string(),
  new_string: z.string(),
  replace_all: z.boolean().optional(),
});

/** Registers `edit(file_path, old_string, new_string, replace_all=false)`. */
export function registerEditTool(server: McpServer, context: ToolContext): void {
  server.registerTool(
    "edit",
    {
      title: "Edit file",
      description: DESCRIPTION,
      inputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
      _meta: { [DRY_RUN_META_KEY]: true },
    },
    guarded("edit", async (args, extra) => {
      const badPolicy = takeCallPolicy(context, extra._meta);
      if (badPolicy) return errorResult(badPolicy);
      const result = await editFile(
        args.file_path,
        args.old_string,
        args.new_string,
        args.replace_all ?? false,
        context.cwd,
        context.sandbox.current,
        isDryRun(extra._meta),
      );
      return appendDiagnostics(context, result, isDryRun(extra._meta));
    }),
  );
}

/**
 * The edit tool's behaviour, independent of MCP. Concurrent edits of one file are serialized. `dryRun`: every check
 * and the match, then the diff, nothing written.
 */
export async function editFile(
  filePath: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
  cwd: string,
  policy?: SandboxPolicy,
  dryRun = false,
): Promise<CallToolResult> {
  const checked = checkAbsolutePath(filePath, cwd);
  if (!checked.ok) return errorResult(checked.error);
  if (oldString === newString) return errorResult("Error: old_string and new_string must be different");
  const file = hostPath(checked.path, policy);
  return withFileLock(file, async () => {
    const located = locateFile(file, "edit");
    if ("error" in located) return located.error;
    try {
      return await editAt(file, located.at, { oldString, newString, replaceAll }, policy, dryRun);
    } finally {
      located.at.dir.close();
    }
  });
}

/**
 * The edit of a located file: the sandbox checks the real path of its held directory, the file is read from a
 * descriptor opened through that directory (a link that appeared at its name since is refused) and checked again on
 * that descriptor, and the result is written back through the same directory.
 */
async function editAt(
  file: string,
  at: Located,
  change: { oldString: string; newString: string; replaceAll: boolean },
  policy: SandboxPolicy | undefined,
  dryRun: boolean,
): Promise<CallToolResult> {
  // An edit reads the file too (its refusals quote it): a hidden file says so rather than "not writable".
  const blocked = policy && (checkOpenedReadable(file, at, policy) ?? checkWritableAt(file, at.real, policy));
  if (blocked) return errorResult(blocked);
  const stats = at.stats;
  if (!stats) {
    if (change.oldString === "") return createFile(file, at, change.newString, dryRun);
    const missing = await describeMissing(file);
    const hint = missing === "" ? "\nTo create it, call edit with an empty old_string or use the write tool." : "";
    return errorResult(`Error: File does not exist: ${file}${missing}${hint}`);
  }
  if (stats.isDirectory()) return errorResult(`Error: Path is a directory: ${file}`);
  if (!stats.isFile()) return errorResult(`Error: Not a regular file: ${file}`);
  if (stats.size > MAX_EDIT_FILE_SIZE) return errorResult(tooLargeToEdit(stats.size));

  let bytes: Buffer;
  try {
    const opened = openLocated(at);
    try {
      const hidden = policy && checkOpenedReadable(file, opened, policy);
      if (hidden) return errorResult(hidden);
      if (!opened.stats.isFile()) return errorResult(`Error: Not a regular file: ${file}`);
      bytes = await readOpened(opened, MAX_EDIT_FILE_SIZE);
    } finally {
      closeSync(opened.fd);
    }
  } catch (error) {
    if (errorCode(error) === "ELOOP") {
      return errorResult(
        `Error: ${file} changed while it was being edited (it is now a symbolic link). Read it again.`,
      );
    }
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Failed to read file: ${errorText(error)}`);
  }
  if (bytes.length > MAX_EDIT_FILE_SIZE) return errorResult(tooLargeToEdit(bytes.length));
  if (classifyHead(bytes.subarray(0, 8192)) === "binary") {
    return errorResult(`Error: Cannot edit binary file: ${file}`);
  }
  const decoded = decodeUtf8(bytes);
  if (!decoded.ok) {
    return errorResult(
      `Error: File is not valid UTF-8 text: ${file} (first invalid byte on line ${decoded.line}). Editing it as text would corrupt it; use the terminal (iconv, sed) instead.`,
    );
  }
  // TextDecoder drops a leading BOM; remember it so it is written back.
  const bom = hasBom(bytes);
  const text = bom && decoded.text.startsWith("\uFEFF") ? decoded.text.slice(1) : decoded.text;
  // crow-mcp serves every session from one thread: a long fuzzy search gives the others a turn every few ms.
  const edited = await editTextAsync(file, text, bom, change, () => nextTurn());
  if (!edited.ok) return errorResult(edited.error);
  const after = edited.text.startsWith("\uFEFF") ? edited.text.slice(1) : edited.text;
  if (dryRun) return textResult(`${DRY_RUN_NOTE}\n${edited.message}`, undefined, diffMeta(file, text, after));
  const failed = await saveAt(file, at, edited.text);
  return failed ?? textResult(edited.message, undefined, diffMeta(file, text, after));
}

async function createFile(file: string, at: Located, content: string, dryRun: boolean): Promise<CallToolResult> {
  if (at.danglingLink !== undefined) {
    return errorResult(
      `Error: ${file} is a symbolic link whose target does not exist${await describeMissing(file)}; edit the target path instead.`,
    );
  }
  if (dryRun) return textResult(`${DRY_RUN_NOTE} It would create ${file}.`, undefined, diffMeta(file, null, content));
  const failed = await saveAt(file, at, content);
  if (failed) return failed;
  return textResult(
    `Successfully edited ${file}\nCreated a new file with ${countLines(content)} lines.`,
    undefined,
    diffMeta(file, null, content),
  );
}
