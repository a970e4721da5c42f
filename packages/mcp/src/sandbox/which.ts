/**
 * Finding the programs the sandbox itself runs (bwrap, and the bash it starts) on PATH without trusting the places
 * the model can write: a PATH entry that is relative, or lies in the process's working directory (an activated
 * `.venv/bin`, `node_modules/.bin`, a direnv `bin/`), is skipped, so a `bwrap` the model planted there is never the
 * one that builds its sandbox, today or in a later session started from the same directory.
 */
import { accessSync, constants, realpathSync, statSync } from "node:fs";
import path from "node:path";

/** True when `child` is `root` or lies under it (both absolute, compared as given). */
export function inside(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function real(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * The directories a lookup must not take programs from: the process's working directory (unless it is `/`, which
 * would leave nothing), and `extra`, each also as its real path.
 */
function untrusted(extra: readonly string[]): string[] {
  const cwd = process.cwd();
  const dirs = [...(cwd === "/" ? [] : [cwd]), ...extra];
  return dirs.flatMap((dir) => {
    const resolved = real(dir);
    return resolved && resolved !== dir ? [dir, resolved] : [dir];
  });
}

/**
 * The absolute real path of the executable `name` on `searchPath`, skipping entries that are relative or lie (also
 * after links are resolved) in one of `avoid`; undefined when none is left. A `name` with a slash is taken as given
 * (it must be absolute).
 */
export function findOnPath(
  name: string,
  avoid: readonly string[],
  // PATH is where programs are, looked up as a shell would: process plumbing, not one of crow-mcp's settings.
  searchPath: string = process.env.PATH ?? "",
): string | undefined {
  const acceptable = (file: string) => !avoid.some((dir) => inside(file, dir));
  if (name.includes("/")) return path.isAbsolute(name) ? name : undefined;
  for (const entry of searchPath.split(path.delimiter)) {
    if (!path.isAbsolute(entry) || !acceptable(entry)) continue;
    const resolved = real(path.join(entry, name));
    // A link from a trusted directory into the workspace is the workspace's file.
    if (!resolved || !acceptable(resolved)) continue;
    try {
      if (!statSync(resolved).isFile()) continue;
      accessSync(resolved, constants.X_OK);
      return resolved;
    } catch {
      // Not executable here: try the next entry.
    }
  }
  return undefined;
}

/**
 * {@link findOnPath} skipping the working directory and `exclude` too: where the model cannot have put a program of
 * that name.
 */
export function trustedExecutable(name: string, exclude: readonly string[] = []): string | undefined {
  return findOnPath(name, untrusted(exclude));
}
