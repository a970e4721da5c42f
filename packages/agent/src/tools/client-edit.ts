/**
 * `edit` through the editor's buffers: the text comes from `fs/read_text_file` (unsaved changes included), crow-mcp's
 * edit engine (`@crow/mcp/edit`: the matcher cascade, re-indentation, CRLF/BOM, its messages) applies the change, and
 * the result goes back through `fs/write_text_file`, so the editor neither misses nor clobbers what the person typed.
 */
import path from "node:path";
import type { ToolDiff, ToolDisplay, ToolResult } from "@crow/core";
import { errorText } from "@crow/core";
import { type EditRequest, editTextAsync, fileLocks, MAX_EDIT_FILE_SIZE, tooLargeToEdit } from "@crow/mcp/edit";
import { type SandboxPolicy, showsHiddenContent } from "@crow/mcp/sandbox";
import type { ClientBridge } from "./client-types.js";
import { diffDisplay } from "./diff.js";

/** Edits through the editor queue per file, as crow-mcp's do, so parallel edits of one file all land. */
const withFileLock = fileLocks();

/** An edit call crow-mcp's schema would accept, with an absolute path; undefined for anything else. */
function editArgs(args: Record<string, unknown>): (EditRequest & { file: string }) | undefined {
  const { file_path: file, old_string: oldString, new_string: newString, replace_all: replaceAll = false } = args;
  if (typeof file !== "string" || file.includes("\0") || !path.isAbsolute(file)) return undefined;
  if (typeof oldString !== "string" || typeof newString !== "string" || typeof replaceAll !== "boolean")
    return undefined;
  if (!Object.keys(args).every((k) => ["file_path", "old_string", "new_string", "replace_all"].includes(k)))
    return undefined;
  if (oldString === newString) return undefined; // crow-mcp refuses it before touching the file
  return { file: path.normalize(file), oldString, newString, replaceAll };
}

/** The buffer's text and its edited text, or the refusal; undefined when the editor cannot give the file as text. */
async function applyToBuffer(
  client: ClientBridge,
  file: string,
  request: EditRequest,
  policy: SandboxPolicy | undefined,
): Promise<{ before: string; after: string; message: string } | { error: string } | undefined> {
  if (!client.readTextFile) return undefined;
  let text: string;
  try {
    text = await client.readTextFile(file);
  } catch {
    return undefined;
  }
  // A link swapped after the sandbox's check may have led the editor to a hidden file: crow-mcp then decides on the
  // descriptor it opens (its refusals would otherwise quote the file).
  if (policy && showsHiddenContent(text, policy)) return undefined;
  if (text.includes("\0")) return { error: `Error: Cannot edit binary file: ${file}` };
  const size = Buffer.byteLength(text, "utf8");
  if (size > MAX_EDIT_FILE_SIZE) return { error: tooLargeToEdit(size) };
  // Editors hand out the byte-order mark as U+FEFF (or drop it); either way it is kept as it came.
  const bom = text.startsWith("\uFEFF");
  // The agent serves ACP on this thread too: a long fuzzy search gives it a turn every few milliseconds.
  const edited = await editTextAsync(file, bom ? text.slice(1) : text, bom, request);
  return edited.ok ? { before: text, after: edited.text, message: edited.message } : { error: edited.error };
}

/**
 * Runs an `edit` call on the editor's buffer and writes the result back through the editor. The result has crow-mcp's
 * text (success message with its diff, or its precise refusal) and a diff from the buffer's text. `fallback` runs the
 * call on crow-mcp instead, for arguments it would reject and files the editor cannot read (a missing file, which an
 * empty old_string creates): it runs under the same per-file lock, so it is ordered with the buffer edits.
 */
export async function clientEdit(
  client: ClientBridge,
  args: Record<string, unknown>,
  fallback: () => Promise<ToolResult>,
  policy?: SandboxPolicy,
): Promise<ToolResult> {
  const request = editArgs(args);
  if (!request || !client.readTextFile || !client.writeTextFile) return fallback();
  const { file } = request;
  const writeTextFile = client.writeTextFile.bind(client);
  return withFileLock(file, async () => {
    const applied = await applyToBuffer(client, file, request, policy);
    if (!applied) return fallback();
    const display: ToolDisplay = { via: "client", locations: [{ path: file }] };
    if ("error" in applied) return { content: applied.error, isError: true, display };
    try {
      await writeTextFile(file, applied.after);
    } catch (error) {
      return {
        content: `Error: Failed to write file: ${errorText(error)}`,
        isError: true,
        display,
      };
    }
    return {
      content: applied.message,
      display: { via: "client", ...diffDisplay({ path: file, oldText: applied.before, newText: applied.after }) },
    };
  });
}

/**
 * What an edit would make of the editor's buffer, for the permission question: the whole buffer before and after.
 * Undefined when {@link clientEdit} would leave the call to crow-mcp (odd arguments, a file the editor cannot read);
 * rejects with the refusal {@link clientEdit} would answer (no match…), so the question can say so.
 */
export async function previewClientEdit(
  client: ClientBridge,
  args: Record<string, unknown>,
  policy?: SandboxPolicy,
): Promise<ToolDiff | undefined> {
  const request = editArgs(args);
  if (!request) return undefined;
  const applied = await applyToBuffer(client, request.file, request, policy);
  if (!applied) return undefined;
  if ("error" in applied) throw new Error(applied.error);
  return { path: request.file, oldText: applied.before, newText: applied.after };
}
