import { locate, makeParents, NotRegularFileError, replaceIn } from "./held.js";

export { NotRegularFileError };

/**
 * Writes `data` to `file` atomically: a temporary file in the same directory, then rename, so a reader (or a
 * crash) never sees half a file. An existing file keeps its mode and, where permitted, its owner. A symbolic
 * link is followed and its target is replaced, so the link itself survives. With `createParent`, missing parent
 * directories are created first (`mkdir -p`).
 *
 * Only a regular file (or nothing) is replaced: renaming over a FIFO, a device node (`/dev/null` when running as
 * root) or a socket would destroy it, so those throw {@link NotRegularFileError} and stay as they are. Throws
 * Node fs errors otherwise; callers translate them into messages for the model. No sandbox check: the tools
 * locate, check and write through held descriptors themselves (held.ts).
 */
export async function writeFileAtomic(file: string, data: string | Uint8Array, createParent = false): Promise<void> {
  const at = locate(file, createParent);
  try {
    if (at.stats && !at.stats.isFile()) throw new NotRegularFileError(at.real, at.stats);
    const dir = makeParents(at);
    try {
      await replaceIn(dir, at.name, data, at.real);
    } finally {
      if (dir !== at.dir) dir.close();
    }
  } finally {
    at.dir.close();
  }
}
