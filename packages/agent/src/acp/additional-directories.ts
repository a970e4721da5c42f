/**
 * ACP `additionalDirectories` (session/new, load, resume, fork; reported by session/list): the session's workspace
 * roots besides its cwd. The runtime checks and stores them; this file reads them off a request and turns the
 * runtime's refusal of one (not absolute, missing, a file) into the -32602 the client gets.
 */
import { RequestError } from "@agentclientprotocol/sdk";

/**
 * The list a request asks for. ACP: on session/new, load, resume and fork, an omitted or empty list activates no
 * additional directories; a non-empty one is the session's complete list from now on.
 */
export function requestedDirectories(value: unknown, method: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((dir) => typeof dir === "string")) {
    throw RequestError.invalidParams(undefined, `${method}: additionalDirectories must be a list of absolute paths`);
  }
  return value;
}

/** Runs `open`, answering a directory the runtime refused with -32602 and its message (which names it). */
export async function withDirectoryErrors<T>(open: () => Promise<T>): Promise<T> {
  try {
    return await open();
  } catch (error) {
    // The runtime's class, imported as lazily as the runtime (which is loaded by now: the error came from it).
    const { InvalidDirectoryError } = await import("@crow/core");
    if (error instanceof InvalidDirectoryError) throw RequestError.invalidParams(undefined, error.message);
    throw error;
  }
}

/** `SessionInfo.additionalDirectories` as session/list reports it (left out when there are none). */
export function listedDirectories(dirs: readonly string[]): { additionalDirectories?: string[] } {
  return dirs.length > 0 ? { additionalDirectories: [...dirs] } : {};
}
