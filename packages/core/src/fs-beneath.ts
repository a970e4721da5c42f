/**
 * File operations beneath a directory that never follow a symbolic link on the way, for what Crow does outside the
 * sandbox in a directory the model's commands can change at the same moment (rewind's restore): each directory is
 * opened with O_DIRECTORY|O_NOFOLLOW through the descriptor of its parent (`/proc/self/fd/N/<name>`, which acts as
 * openat(2) on Linux), and files are created, renamed and unlinked in the directory so opened. A directory swapped
 * for a link mid-way makes the operation fail (or, for a path being written, the link itself is replaced), never
 * reach where the link points. Without /proc (not Linux) the same calls go by path, checking each component first:
 * the best there is without openat in Node, and racy. Also {@link readInside}: a file read for a prompt only if it is
 * a regular file inside a directory, checked on the open descriptor.
 */
import { randomBytes } from "node:crypto";
import { constants, existsSync, type Stats } from "node:fs";
import {
  type FileHandle,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  realpath,
  rename,
  rmdir,
  stat,
  symlink,
  unlink,
} from "node:fs/promises";
import path from "node:path";

const BY_FD = existsSync("/proc/self/fd");
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** Linux's O_PATH (not in Node's constants): a descriptor that names a file without opening it for I/O. */
const O_PATH = 0o10000000;

/** A directory held open (Linux), or only its checked path (elsewhere). */
export class BeneathDir {
  private constructor(
    private readonly handle: FileHandle | undefined,
    /** The directory's path as reached from the root (for messages; never used to reach it on Linux). */
    readonly shown: string,
  ) {}

  /** Opens `root` itself (the one path that is followed as given: it is the user's choice). */
  static async open(root: string): Promise<BeneathDir> {
    return new BeneathDir(BY_FD ? await open(root, constants.O_RDONLY | constants.O_DIRECTORY) : undefined, root);
  }

  /** The path naming `name` inside this directory: through the descriptor on Linux. */
  at(name: string): string {
    if (name === "" || name === "." || name === ".." || name.includes("/")) {
      throw new Error(`not a single path component: ${JSON.stringify(name)}`);
    }
    return this.handle ? `/proc/self/fd/${this.handle.fd}/${name}` : path.join(this.shown, name);
  }

  /** The path naming this directory itself: through the descriptor on Linux (a link swapped in changes nothing). */
  here(): string {
    return this.handle ? `/proc/self/fd/${this.handle.fd}` : this.shown;
  }

  /** The subdirectory `name`, never through a link (ELOOP or ENOTDIR when it is one); ENOENT when missing. */
  async child(name: string): Promise<BeneathDir> {
    const shown = path.join(this.shown, name);
    if (this.handle) return new BeneathDir(await open(this.at(name), DIR_FLAGS), shown);
    const info = await lstat(shown);
    if (!info.isDirectory()) throw Object.assign(new Error(`${shown} is not a directory`), { code: "ENOTDIR" });
    return new BeneathDir(undefined, shown);
  }

  async close(): Promise<void> {
    await this.handle?.close();
  }
}

/**
 * Runs `work` in the directory `dirs` (components below `root`), opened one by one without following links. With
 * `create`, missing directories are made and a symbolic link in the way is replaced by a directory (what a checkout
 * does: the link itself goes, never what it points to). Without, a missing or linked component resolves to undefined:
 * nothing there belongs to the path.
 */
export async function inDirBeneath<T>(
  root: string,
  dirs: readonly string[],
  create: boolean,
  work: (dir: BeneathDir) => Promise<T>,
): Promise<T | undefined> {
  const opened: BeneathDir[] = [await BeneathDir.open(root)];
  try {
    for (const name of dirs) {
      const parent = opened[opened.length - 1] as BeneathDir;
      let next: BeneathDir | undefined;
      try {
        next = await parent.child(name);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (!create) {
          if (code === "ENOENT" || code === "ELOOP" || code === "ENOTDIR") return undefined;
          throw error;
        }
        if (code === "ELOOP" || (code === "ENOTDIR" && (await lstat(parent.at(name))).isSymbolicLink())) {
          await unlink(parent.at(name));
        } else if (code !== "ENOENT") throw error;
        await mkdir(parent.at(name)).catch((made: NodeJS.ErrnoException) => {
          if (made.code !== "EEXIST") throw made;
        });
        next = await parent.child(name);
      }
      opened.push(next);
    }
    return await work(opened[opened.length - 1] as BeneathDir);
  } finally {
    for (const dir of opened.reverse()) await dir.close();
  }
}

function split(relative: string): { dirs: string[]; name: string } {
  const parts = relative.split("/").filter((part) => part !== "");
  const name = parts.pop();
  if (name === undefined) throw new Error(`empty path: ${JSON.stringify(relative)}`);
  return { dirs: parts, name };
}

/**
 * Puts a file (or, with `link`, a symbolic link whose target is `bytes`) at `relative` below `root`: written to a new
 * temporary entry (O_EXCL|O_NOFOLLOW) in the parent directory opened as above, then renamed over the old entry, so a
 * link at the name is replaced, never written through. `executable` picks mode 0777 or 0666 before the umask, as git
 * does.
 */
export async function putBeneath(
  root: string,
  relative: string,
  bytes: Buffer,
  kind: { link?: boolean; executable?: boolean } = {},
): Promise<void> {
  const { dirs, name } = split(relative);
  await inDirBeneath(root, dirs, true, async (dir) => {
    const temporary = dir.at(`.${name.slice(0, 100)}.crow-${process.pid}-${randomBytes(4).toString("hex")}`);
    try {
      if (kind.link) await symlink(bytes.toString("utf8"), temporary);
      else {
        const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
        const file = await open(temporary, flags, kind.executable ? 0o777 : 0o666);
        try {
          await file.writeFile(bytes);
        } finally {
          await file.close();
        }
      }
      await rename(temporary, dir.at(name));
    } catch (error) {
      await unlink(temporary).catch(() => undefined);
      throw error;
    }
  });
}

/**
 * Removes the file or link at `relative` below `root`, reached as above: a path that leads through a link or a
 * missing directory is not there (nothing is removed). A directory at the name is left alone (its files are paths of
 * their own). Resolves to whether something was removed.
 */
export async function removeBeneath(root: string, relative: string): Promise<boolean> {
  const { dirs, name } = split(relative);
  const removed = await inDirBeneath(root, dirs, false, async (dir) => {
    try {
      await unlink(dir.at(name));
      return true;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EISDIR" || code === "EPERM" || code === "ENOTDIR") return false;
      throw error;
    }
  });
  return removed === true;
}

/**
 * Removes the entry `name` of `parent` and, when it is a directory, everything in it, each directory opened as above:
 * a link (at the name or anywhere below) is removed itself, never followed, so a link swapped in mid-way cannot lead
 * the removal elsewhere. Resolves to whether there was something to remove.
 */
export async function removeTreeAt(parent: BeneathDir, name: string): Promise<boolean> {
  let dir: BeneathDir;
  try {
    dir = await parent.child(name);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return false;
    if (code !== "ELOOP" && code !== "ENOTDIR") throw error;
    await unlink(parent.at(name));
    return true;
  }
  try {
    for (const entry of await readdir(dir.here())) await removeTreeAt(dir, entry);
  } finally {
    await dir.close();
  }
  await rmdir(parent.at(name));
  return true;
}

/** What {@link readInside} found: the bytes (and the file's status), or why it refused (a sentence). */
export type InsideRead = { bytes: Buffer; info: Stats } | { refused: string; info?: Stats };

function within(child: string, root: string): boolean {
  const rel = path.relative(root, child);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

/**
 * Reads `file` only if it is a regular file whose real path is inside `root` (links that stay inside are fine): no
 * /proc file (a link to `/proc/self/environ` would put Crow's environment, keys included, into a prompt), device,
 * FIFO, or file elsewhere. The check is made on the open descriptor (O_NONBLOCK: a FIFO cannot hold the open up; its
 * real path as the kernel has it), not on the path before opening, so a link swapped in between changes nothing.
 * Undefined when there is no such file. At most `maxBytes` are read.
 */
export async function readInside(root: string, file: string, maxBytes: number): Promise<InsideRead | undefined> {
  // Only saves opening what cannot qualify; the check that counts is on the descriptor below.
  const seen = await stat(file).catch(() => undefined);
  if (!seen) return undefined;
  if (!seen.isFile()) return { refused: "it is not a regular file" };
  let handle: FileHandle;
  try {
    // On Linux an O_PATH descriptor first: a device swapped in after the check above is never opened for reading
    // (some have effects on open), only looked at; the file is opened through the descriptor once it qualifies.
    handle = await open(file, BY_FD ? O_PATH : constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch {
    return undefined;
  }
  let reading: FileHandle | undefined;
  try {
    const info = await handle.stat();
    if (!info.isFile()) return { refused: "it is not a regular file", info };
    const rootReal = await realpath(root);
    let real: string;
    if (BY_FD) real = await readlink(`/proc/self/fd/${handle.fd}`);
    else {
      // No descriptor path without /proc: the real path, accepted only if it is still this very file.
      real = await realpath(file);
      const again = await stat(real);
      if (again.dev !== info.dev || again.ino !== info.ino) return { refused: "it changed while it was read", info };
    }
    if (!within(real, rootReal)) return { refused: `it leads outside ${root} (to ${real})`, info };
    reading = BY_FD
      ? await open(`/proc/self/fd/${handle.fd}`, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY)
      : handle;
    const size = Math.min(info.size, maxBytes);
    const bytes = Buffer.alloc(size);
    let done = 0;
    while (done < size) {
      const { bytesRead } = await reading.read(bytes, done, size - done, done);
      if (bytesRead === 0) break;
      done += bytesRead;
    }
    return { bytes: bytes.subarray(0, done), info };
  } finally {
    if (reading && reading !== handle) await reading.close();
    await handle.close();
  }
}
