import { closeSync } from "node:fs";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { DRY_RUN_META_KEY, DRY_RUN_NOTE, diffMeta, isDryRun, MAX_DIFF_CHARS } from "../edit/diff-meta.js";
import { countLines } from "../edit/text.js";
import { type Located, type OpenedFile, openLocated, readOpened } from "../fs/held.js";
import { checkAbsolutePath } from "../fs/paths.js";
import { appendDiagnostics } from "../lsp/index.js";
import { hostPath } from "../sandbox/binds.js";
import { checkOpenedReadable } from "../sandbox/hidden.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { checkWritableAt } from "../sandbox/roots.js";
import { errorResult, guarded, textResult } from "./result.js";
import { locateFile, notRegularFile, saveAt } from "./save.js";

const DESCRIPTION = "Write a whole file, creating parent directories. To change part of a file, use edit.";

const inputSchema = z.strictObject({
  file_path: z.string().describe("Absolute path"),
  content: z.string(),
});

/** Registers `write(file_path, content)`. */
export function registerWriteTool(server: McpServer, context: ToolContext): void {
  server.registerTool(
    "write",
    {
      title: "Write file",
      description: DESCRIPTION,
      inputSchema,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      _meta: { [DRY_RUN_META_KEY]: true },
    },
    guarded("write", async (args, extra) => {
      const badPolicy = takeCallPolicy(context, extra._meta);
      if (badPolicy) return errorResult(badPolicy);
      const dryRun = isDryRun(extra._meta);
      const result = await writeTextFile(args.file_path, args.content, context.cwd, context.sandbox.current, dryRun);
      return appendDiagnostics(context, result, dryRun);
    }),
  );
}

/**
 * The write tool's behaviour, independent of MCP. `dryRun`: every check, then the diff, nothing written. The file's
 * directory is opened first and the sandbox checks its real path; the file is then created and replaced through
 * that open directory, so a link swapped after the check cannot send the write elsewhere.
 */
export async function writeTextFile(
  filePath: string,
  content: string,
  cwd: string,
  policy?: SandboxPolicy,
  dryRun = false,
): Promise<CallToolResult> {
  const checked = checkAbsolutePath(filePath, cwd);
  if (!checked.ok) return errorResult(checked.error);
  const file = hostPath(checked.path, policy);
  const located = locateFile(file, "write");
  if ("error" in located) return located.error;
  const { at } = located;
  try {
    const blocked = policy && checkWritableAt(file, at.real, policy);
    if (blocked) return errorResult(blocked);
    const existing = at.stats;
    if (existing?.isDirectory()) return errorResult(`Error: Path is a directory, not a file: ${file}`);
    if (existing && !existing.isFile()) return errorResult(notRegularFile(file, existing));
    if (at.danglingLink !== undefined) {
      return errorResult(
        `Error: ${file} is a symbolic link whose target does not exist; write to the target path instead.`,
      );
    }
    // What it replaces, for the diff the client shows (none for a file too big to diff, unreadable, or hidden).
    const before = !existing
      ? null
      : existing.size > MAX_DIFF_CHARS
        ? undefined
        : await readLocatedText(file, at, policy);
    if (dryRun) {
      return textResult(
        `${DRY_RUN_NOTE} It would write ${countLines(content)} lines to ${file}`,
        undefined,
        diffMeta(file, before, content),
      );
    }
    const failed = await saveAt(file, at, content);
    if (failed) return failed;
    return textResult(
      `Successfully wrote ${countLines(content)} lines to ${file}`,
      undefined,
      diffMeta(file, before, content),
    );
  } finally {
    at.dir.close();
  }
}

/** The located file's text, read through its held directory; undefined when it cannot be read or is hidden. */
async function readLocatedText(file: string, at: Located, policy?: SandboxPolicy): Promise<string | undefined> {
  let opened: OpenedFile;
  try {
    opened = openLocated(at);
  } catch {
    return undefined;
  }
  try {
    if (!opened.stats.isFile() || (policy && checkOpenedReadable(file, opened, policy))) return undefined;
    const bytes = await readOpened(opened, MAX_DIFF_CHARS);
    return bytes.length > MAX_DIFF_CHARS ? undefined : bytes.toString("utf8");
  } catch {
    return undefined;
  } finally {
    closeSync(opened.fd);
  }
}
