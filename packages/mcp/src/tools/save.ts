import path from "node:path";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ensureParent, writeFileAtomic } from "../fs/atomic.js";
import { errorCode, isPermissionError } from "../fs/paths.js";
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
    if (isPermissionError(error)) return errorResult(`Error: Permission denied: ${file}`);
    return errorResult(`Error: Failed to write file: ${(error as Error).message}`);
  }
  return undefined;
}
