/**
 * Where a path really leads, for permission rules: a rule on `/x/protected/**` must also catch `ws/link/file` when
 * `ws/link` is a symlink into `/x/protected`.
 */
import { lstatSync, readlinkSync, realpathSync } from "node:fs";
import path from "node:path";

/** Symlinks followed before giving up (Linux's own limit for one lookup is 40). */
const MAX_LINKS = 40;

/**
 * The real path of absolute path `file`: every symlink resolved. For a path that does not exist (yet), the real path
 * of its nearest existing ancestor plus the rest; a dangling symlink is followed to where it points (a write through
 * it would create that file). Never throws: when nothing can be resolved, `file` itself.
 */
export function realPathOf(file: string): string {
  let current = path.resolve(file);
  const rest: string[] = [];
  for (let links = 0; links <= MAX_LINKS; ) {
    try {
      return path.join(realpathSync(current), ...rest);
    } catch {
      // Does not exist, or cannot be resolved: a dangling link is followed, anything else resolved through its parent.
    }
    let target: string | undefined;
    try {
      if (lstatSync(current).isSymbolicLink()) target = readlinkSync(current);
    } catch {
      target = undefined;
    }
    if (target !== undefined) {
      current = path.resolve(path.dirname(current), target);
      links++;
      continue;
    }
    const parent = path.dirname(current);
    if (parent === current) break;
    rest.unshift(path.basename(current));
    current = parent;
  }
  return path.resolve(file);
}

/**
 * An absolute path glob with its leading directories (the part before the first `*` or `?`) resolved by
 * {@link realPathOf}: `/tmp/x/**` → `/private/tmp/x/**` where /tmp is a link. The glob itself when nothing changes.
 */
export function realGlobOf(glob: string): string {
  const wild = glob.search(/[*?]/);
  const fixed = wild < 0 ? glob : glob.slice(0, wild);
  const cut = fixed.lastIndexOf("/");
  if (cut <= 0) return glob;
  const dir = fixed.slice(0, cut);
  const real = realPathOf(dir);
  return real === dir ? glob : `${real}${glob.slice(cut)}`;
}
