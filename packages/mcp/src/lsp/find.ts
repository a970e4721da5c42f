/**
 * Where a language server's executable is, as a user has it: the project's `node_modules/.bin` (the workspace and its
 * parents, nearest first), then PATH. Nothing is ever downloaded.
 */
import { accessSync, constants, statSync } from "node:fs";
import path from "node:path";
import type { Language } from "./languages.js";

/**
 * The first executable file `name` in `dirs` (absolute entries only), as found: a link is run as the link, since some
 * programs (rustup's proxies: rust-analyzer) tell what to be by the name they were started as. A `name` with a slash
 * is taken as given when absolute.
 */
function lookUp(name: string, dirs: readonly string[]): string | undefined {
  if (name.includes("/")) return path.isAbsolute(name) && executable(name) ? name : undefined;
  for (const dir of dirs) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

function executable(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The project's `node_modules/.bin` directories from `root` up to `/`, nearest first. */
function projectBins(root: string): string[] {
  const bins: string[] = [];
  for (let dir = root; ; dir = path.dirname(dir)) {
    bins.push(path.join(dir, "node_modules", ".bin"));
    if (path.dirname(dir) === dir) return bins;
  }
}

/** The executable of `language`'s server for a workspace at `root` (an absolute path), or undefined. */
export function findServer(
  language: Language,
  root: string,
  // PATH lookup, as a shell would: process plumbing, not one of crow-mcp's settings (those are settings.ts's).
  searchPath: string = process.env.PATH ?? "",
): string | undefined {
  const dirs = [...projectBins(root), ...searchPath.split(path.delimiter)];
  for (const command of language.commands) {
    const found = lookUp(command, dirs);
    if (found) return found;
  }
  return undefined;
}

/** What was looked for, for the notice that none was found. */
export function describeSearch(language: Language): string {
  return `${language.commands.join(" or ")} on PATH or in the project's node_modules/.bin`;
}
