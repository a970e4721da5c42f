/**
 * Hard links, for permission rules: `ln ~/secret/key.txt ws/k` (the shell can do that) gives the file a path of its
 * own that neither the rule's glob nor the real path matches. A rule that names the file still catches it when the
 * two are compared by device and inode, as the sandbox's hidden-file check does.
 */
import { type Dirent, readdirSync, type Stats, statSync } from "node:fs";
import path from "node:path";

/** Directory entries looked at for one glob before giving up (a rule on a huge tree is not walked whole). */
const MAX_ENTRIES = 10_000;

/** The file at `file` when it is a regular file with more than one name (a hard link), else undefined. */
export function linkedFile(file: string): Stats | undefined {
  try {
    const stats = statSync(file);
    return stats.isFile() && stats.nlink > 1 ? stats : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether some file named by absolute path glob `glob` (tested with `matches`) is `file` itself, by device and inode.
 * A glob without wildcards is one stat; otherwise the directory before the first wildcard is walked (links not
 * followed, at most {@link MAX_ENTRIES} entries).
 */
export function globNamesFile(glob: string, file: Stats, matches: (candidate: string) => boolean): boolean {
  const wild = glob.search(/[*?]/);
  if (wild < 0) return same(glob, file);
  const dir = glob.slice(0, glob.lastIndexOf("/", wild)) || "/";
  const pending = [dir];
  let seen = 0;
  while (pending.length > 0 && seen < MAX_ENTRIES) {
    const current = pending.pop() as string;
    let entries: Dirent[];
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > MAX_ENTRIES) break;
      const candidate = path.join(current, entry.name);
      if (entry.isDirectory()) pending.push(candidate);
      else if (entry.isFile() && matches(candidate) && same(candidate, file)) return true;
    }
  }
  return false;
}

function same(candidate: string, file: Stats): boolean {
  try {
    const stats = statSync(candidate);
    return stats.dev === file.dev && stats.ino === file.ino;
  } catch {
    return false;
  }
}
