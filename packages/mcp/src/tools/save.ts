import type { Stats } from "node:fs";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { errorText } from "../error-text.js";
import { type Located, locate, makeParents, NotRegularFileError, replaceIn } from "../fs/held.js";
import { describeFileType, errorCode, isPermissionError } from "../fs/paths.js";
import { errorResult } from "./result.js";

/**
 * Locates `file` for a write or an edit (its deepest existing directory held open, a link at its name followed hop
 * by hop: see held.ts), or says why it cannot be. The caller checks `real` against the sandbox, then acts through
 * the held directory, and closes `at.dir`.
 */
export function locateFile(file: string, tool: "write" | "edit"): { at: Located } | { error: CallToolResult } {
  try {
    return { at: locate(file, true) };
  } catch (error) {
    if (errorCode(error) === "ENOTDIR") {
      const text =
        tool === "write"
          ? `Error: Failed to create directory: ${path.dirname(file)} (a component of the path is a file)`
          : `Error: File does not exist: ${file} (a parent is not a directory)`;
      return { error: errorResult(text) };
    }
    if (errorCode(error) === "EISDIR") return { error: errorResult(`Error: Path is a directory, not a file: ${file}`) };
    if (isPermissionError(error)) return { error: errorResult(`Error: Permission denied: ${file}`) };
    return { error: errorResult(`Error: Cannot open ${path.dirname(file)}: ${errorText(error)}`) };
  }
}

/**
 * Writes a located file for a tool (its missing directories, then an atomic replace, all through the held
 * directory) and translates failures into upstream's messages. Resolves to an error result, or to undefined when
 * the file was written.
 */
export async function saveAt(file: string, at: Located, content: string): Promise<CallToolResult | undefined> {
  let dir = at.dir;
  if (at.missing.length > 0) {
    const parent = path.dirname(file);
    try {
      dir = makeParents(at);
    } catch (error) {
      if (isPermissionError(error)) return errorResult(`Error: Permission denied creating directory: ${parent}`);
      const code = errorCode(error);
      if (code === "EEXIST" || code === "ENOTDIR" || code === "ELOOP") {
        return errorResult(`Error: Failed to create directory: ${parent} (a component of the path is a file)`);
      }
      return errorResult(`Error: Failed to create directory: ${errorText(error)}`);
    }
  }
  try {
    await replaceIn(dir, at.name, content, file);
  } catch (error) {
    if (error instanceof NotRegularFileError) return errorResult(notRegularFile(file, error.stats));
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Failed to write file: ${errorText(error)}`);
  } finally {
    if (dir !== at.dir) dir.close();
  }
  return undefined;
}

/** The refusal to replace something that is not a regular file (a FIFO, a device, a socket) with one. */
export function notRegularFile(file: string, stats: Stats): string {
  return `Error: ${file} is ${describeFileType(stats)}, not a regular file, and was left as it is: write and edit only replace regular files. Write to a regular file instead, or use the terminal to send data to it.`;
}
