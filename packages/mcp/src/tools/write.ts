import { lstat, readFile, stat } from "node:fs/promises";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { ToolContext } from "../context.js";
import { DRY_RUN_META_KEY, DRY_RUN_NOTE, diffMeta, isDryRun, MAX_DIFF_CHARS } from "../edit/diff-meta.js";
import { countLines } from "../edit/text.js";
import { checkAbsolutePath } from "../fs/paths.js";
import { hostPath } from "../sandbox/binds.js";
import { takeCallPolicy } from "../sandbox/meta.js";
import type { SandboxPolicy } from "../sandbox/policy.js";
import { checkWritable } from "../sandbox/roots.js";
import { errorResult, guarded, textResult } from "./result.js";
import { notRegularFile, saveFile } from "./save.js";

const DESCRIPTION = `Write a whole file to the local filesystem, creating parent directories as needed.

- file_path must be an absolute path. An existing file is replaced entirely (atomically; its permissions are kept). Only regular files are written: a FIFO, device or socket is refused.
- Prefer the edit tool to change part of an existing file, and read a file before overwriting it.
- Content is written as UTF-8 exactly as given.`;

const inputSchema = z.strictObject({
  file_path: z.string().describe("Absolute path of the file to write"),
  content: z.string().describe("The full content of the file"),
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
      return writeTextFile(args.file_path, args.content, context.cwd, context.sandbox.current, isDryRun(extra._meta));
    }),
  );
}

/** The write tool's behaviour, independent of MCP. `dryRun`: every check, then the diff, nothing written. */
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
  const blocked = policy && checkWritable(file, policy);
  if (blocked) return errorResult(blocked);

  const existing = await stat(file).catch(() => undefined);
  if (existing?.isDirectory()) return errorResult(`Error: Path is a directory, not a file: ${file}`);
  if (existing && !existing.isFile()) return errorResult(notRegularFile(file, existing));
  const link = await lstat(file).catch(() => undefined);
  if (link?.isSymbolicLink() && !existing) {
    return errorResult(
      `Error: ${file} is a symbolic link whose target does not exist; write to the target path instead.`,
    );
  }

  // What it replaces, for the diff the client shows (none for a file too big to diff, or unreadable).
  const before = !existing
    ? null
    : existing.size > MAX_DIFF_CHARS
      ? undefined
      : await readFile(file, "utf8").catch(() => undefined);
  if (dryRun) {
    return textResult(
      `${DRY_RUN_NOTE} It would write ${countLines(content)} lines to ${file}`,
      undefined,
      diffMeta(file, before, content),
    );
  }
  const failed = await saveFile(file, content, { createParent: true });
  if (failed) return failed;
  return textResult(
    `Successfully wrote ${countLines(content)} lines to ${file}`,
    undefined,
    diffMeta(file, before, content),
  );
}
