import type { Stats } from "node:fs";
import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ensureParent, NotRegularFileError, writeFileAtomic } from "../fs/atomic.js";
import { describeFileType, errorCode, isPermissionError } from "../fs/paths.js";
import { errorResult } from "./result.js";

/**
 * Writes a file for a tool (`mkdir -p` of its parent, then an atomic write) and translates failures into upstream's
 * messages. Resolves to an error result, or to undefined when the file was written.
 */
export async function saveFile(
  file: string,
  content: string,
  options: { createParent: boolean },
): Promise<CallToolResult | undefined> {
  if (options.createParent) {
    const parent = path.dirname(file);
    try {
      await ensureParent(file);
    } catch (error) {
      if (isPermissionError(error)) return errorResult(`Error: Permission denied creating directory: ${parent}`);
      if (errorCode(error) === "EEXIST" || errorCode(error) === "ENOTDIR") {
        return errorResult(`Error: Failed to create directory: ${parent} (a component of the path is a file)`);
      }
      return errorResult(`Error: Failed to create directory: ${(error as Error).message}`);
    }
  }
  try {
    await writeFileAtomic(file, content);
  } catch (error) {
    if (error instanceof NotRegularFileError) return errorResult(notRegularFile(file, error.stats));
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Failed to write file: ${(error as Error).message}`);
  }
  return undefined;
}

/** The refusal to replace something that is not a regular file (a FIFO, a device, a socket) with one. */
export function notRegularFile(file: string, stats: Stats): string {
  return `Error: ${file} is ${describeFileType(stats)}, not a regular file, and was left as it is: write and edit only replace regular files. Write to a regular file instead, or use the terminal to send data to it.`;
}
