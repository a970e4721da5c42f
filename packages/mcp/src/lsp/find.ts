/**
 * Where a language server's executable is, as a user has it: the project's `node_modules/.bin` (the workspace and its
 * parents, nearest first), then PATH. Nothing is ever downloaded.
 */
import path from "node:path";
import { findOnPath } from "../sandbox/which.js";
import type { Language } from "./languages.js";

/** The project's `node_modules/.bin` directories from `root` up to `/`, nearest first. */
function projectBins(root: string): string[] {
  const bins: string[] = [];
  for (let dir = root; ; dir = path.dirname(dir)) {
    bins.push(path.join(dir, "node_modules", ".bin"));
    if (path.dirname(dir) === dir) return bins;
  }
}

/** The executable of `language`'s server for a workspace at `root` (absolute real path), or undefined. */
export function findServer(
  language: Language,
  root: string,
  searchPath: string = process.env.PATH ?? "",
): string | undefined {
  const bins = projectBins(root).join(path.delimiter);
  for (const command of language.commands) {
    const found = findOnPath(command, [], bins) ?? findOnPath(command, [], searchPath);
    if (found) return found;
  }
  return undefined;
}

/** What was looked for, for the notice that none was found. */
export function describeSearch(language: Language): string {
  return `${language.commands.join(" or ")} on PATH or in the project's node_modules/.bin`;
}
