/**
 * File operations anchored on open descriptors, so that what was checked is what is used: a path checked and then
 * looked up again can lead elsewhere in between (a racing shell swaps a symbolic link), a descriptor cannot.
 *
 * On Linux a directory held open is named by `/proc/self/fd/<fd>`: the kernel follows that magic link to the very
 * directory that was opened, so `/proc/self/fd/<fd>/<name>` is `openat(fd, name)` with any fs call Node offers, and
 * `readlink /proc/self/fd/<fd>` is where the opened file really is. Elsewhere (no /proc) the paths themselves are
 * used: Crow's sandbox exists only on Linux, so there the checks have no shell to race with.
 */

import { randomBytes } from "node:crypto";
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  fchownSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  read as readAsync,
  readlinkSync,
  readSync,
  realpathSync,
  renameSync,
  type Stats,
  unlinkSync,
  write as writeAsync,
  writeSync,
} from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

const PROC_FD = process.platform === "linux" && existsSync("/proc/self/fd");

/** Opening for reading never blocks on a FIFO and never makes a terminal the controlling one. */
export const READ_FLAGS = constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY;
/** Symbolic links followed hop by hop before giving up (Linux's own limit for one lookup is 40). */
const MAX_LINKS = 40;
/** Larger reads and writes go through the thread pool, so one big file does not hold up other sessions. */
const SYNC_IO_LIMIT = 256 * 1024;

/** Where the file open on `fd` really is (links resolved, as the kernel opened it); `fallback` without /proc. */
export function realPathOfFd(fd: number, fallback: string): string {
  if (!PROC_FD) return realpathSync(fallback);
  return readlinkSync(`/proc/self/fd/${fd}`);
}

/** A directory held open: every name inside it is looked up in that directory, wherever its path now leads. */
export class HeldDir {
  private constructor(
    private readonly fd: number,
    /** The directory's real path when it was opened. */
    readonly real: string,
  ) {}

  /** Opens directory `dir` (links in it followed: the caller checks {@link real}). Throws Node fs errors. */
  static open(dir: string): HeldDir {
    const fd = openSync(dir, DIR_FLAGS);
    try {
      return new HeldDir(fd, realPathOfFd(fd, dir));
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  /** A path naming `name` (one component) in this directory, for any fs call: `openat(fd, name)`. */
  at(name: string): string {
    return PROC_FD ? `/proc/self/fd/${this.fd}/${name}` : path.join(this.real, name);
  }

  /** The directory `name` inside this one, created when missing; a symbolic link there is refused (ELOOP/ENOTDIR). */
  child(name: string, create: boolean): HeldDir {
    if (create) {
      try {
        mkdirSync(this.at(name));
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      }
    }
    const fd = openSync(this.at(name), DIR_FLAGS | constants.O_NOFOLLOW);
    try {
      return new HeldDir(fd, PROC_FD ? realPathOfFd(fd, "") : path.join(this.real, name));
    } catch (error) {
      closeSync(fd);
      throw error;
    }
  }

  close(): void {
    closeSync(this.fd);
  }
}

/**
 * Where a file operation on a path lands: its deepest existing directory held open, the directories still missing
 * below it, and the final name. `real` is the real path the operation reaches; check it before acting.
 */
export interface Located {
  dir: HeldDir;
  /** Directories between `dir` and the file that do not exist yet (created by {@link makeParents}). */
  missing: string[];
  name: string;
  /** `dir.real`, the missing directories and `name`. */
  real: string;
  /** `lstat` of the final name when it exists (never a symbolic link: those were followed). */
  stats?: Stats;
  /** A symbolic link led here whose target does not exist. */
  danglingLink?: string;
}

/**
 * Locates `file` (absolute, normalized) for a write: opens its parent (or, with `allowMissing`, its deepest existing
 * ancestor) and follows a symbolic link at the final name hop by hop, opening each target's parent afresh, so that
 * the written file is the link's target and the link survives as before. Each hop's directory is real by
 * construction; only `real` needs checking. Throws Node fs errors (ENOENT, ENOTDIR, EACCES, ELOOP).
 */
export function locate(file: string, allowMissing: boolean): Located {
  let current = file;
  let viaLink: string | undefined;
  for (let hops = 0; hops <= MAX_LINKS; hops++) {
    const name = path.basename(current);
    if (name === "" || name === "." || name === "..")
      throw Object.assign(new Error(`${current} is a directory`), { code: "EISDIR" });
    const { dir, missing } = openAncestor(path.dirname(current), allowMissing);
    const real = path.join(dir.real, ...missing, name);
    if (missing.length > 0) {
      return { dir, missing, name, real, ...(viaLink ? { danglingLink: viaLink } : {}) };
    }
    let stats: Stats | undefined;
    try {
      stats = lstatSync(dir.at(name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") {
        dir.close();
        throw error;
      }
    }
    if (!stats?.isSymbolicLink()) {
      return {
        dir,
        missing,
        name,
        real,
        ...(stats ? { stats } : {}),
        ...(viaLink && !stats ? { danglingLink: viaLink } : {}),
      };
    }
    let target: string;
    try {
      target = readlinkSync(dir.at(name));
    } finally {
      dir.close();
    }
    viaLink = current;
    current = path.resolve(path.dirname(real), target);
  }
  throw Object.assign(new Error(`Too many levels of symbolic links: ${file}`), { code: "ELOOP" });
}

/** Opens `dir`, or with `allowMissing` its deepest existing ancestor plus the names below it that are missing. */
function openAncestor(dir: string, allowMissing: boolean): { dir: HeldDir; missing: string[] } {
  const missing: string[] = [];
  let current = dir;
  for (;;) {
    try {
      return { dir: HeldDir.open(current), missing: missing.reverse() };
    } catch (error) {
      const parent = path.dirname(current);
      if (!allowMissing || (error as NodeJS.ErrnoException).code !== "ENOENT" || parent === current) throw error;
      missing.push(path.basename(current));
      current = parent;
    }
  }
}

/** A file opened for reading, with its `fstat` and where it really is. Close it with {@link closeSync}. */
export interface OpenedFile {
  fd: number;
  stats: Stats;
  real: string;
}

/** Opens `file` for reading ({@link READ_FLAGS}; links followed) and describes what was opened. */
export function openForRead(file: string): OpenedFile {
  const fd = openSync(file, READ_FLAGS);
  try {
    return { fd, stats: fstatSync(fd), real: realPathOfFd(fd, file) };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

/** Opens the located file itself for reading: a symbolic link that appeared at its name since is refused (ELOOP). */
export function openLocated(at: Located): OpenedFile {
  const fd = openSync(at.dir.at(at.name), READ_FLAGS | constants.O_NOFOLLOW);
  try {
    return { fd, stats: fstatSync(fd), real: at.real };
  } catch (error) {
    closeSync(fd);
    throw error;
  }
}

const readChunk = promisify(readAsync);
const writeChunk = promisify(writeAsync);

/**
 * Reads the open file from its start until its end or `limit` bytes (files in /proc say size 0 and have content):
 * at most `limit + 1` bytes come back, so a caller can tell that there was more.
 */
export async function readOpened(file: OpenedFile, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  const small = file.stats.size <= SYNC_IO_LIMIT;
  for (;;) {
    const want = Math.min(Math.max(file.stats.size - total, 0) + 1, limit + 1 - total, 1024 * 1024);
    if (want <= 0) break;
    const buffer = Buffer.allocUnsafe(Math.max(want, 8192));
    const count = small
      ? readSync(file.fd, buffer, 0, buffer.length, total)
      : (await readChunk(file.fd, buffer, 0, buffer.length, total)).bytesRead;
    if (count === 0) break;
    chunks.push(buffer.subarray(0, count));
    total += count;
    if (total > limit) break;
  }
  return chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, total);
}

/** Thrown by {@link replaceIn} when the target exists and is not a regular file. */
export class NotRegularFileError extends Error {
  constructor(
    readonly file: string,
    readonly stats: Stats,
  ) {
    super(`${file} is not a regular file`);
    this.name = "NotRegularFileError";
  }
}

/**
 * Creates the located file's missing directories one at a time, each through the one above it and opened without
 * following a link, and returns the directory that holds the file (`at.dir` itself when nothing was missing; the
 * caller closes any other). Throws Node fs errors (EEXIST or ELOOP when a file or link is in the way).
 */
export function makeParents(at: Located): HeldDir {
  let dir = at.dir;
  try {
    for (const name of at.missing) {
      const next = dir.child(name, true);
      if (dir !== at.dir) dir.close();
      dir = next;
    }
    return dir;
  } catch (error) {
    if (dir !== at.dir) dir.close();
    throw error;
  }
}

/**
 * Writes `data` as `name` in held directory `dir`, atomically and entirely inside it: a temporary file is created
 * there with O_CREAT|O_EXCL|O_NOFOLLOW, then renamed over the name (rename replaces whatever is at the name, a link
 * too, and never follows it). An existing file keeps its mode and, where permitted, its owner. Only a regular file
 * (or nothing) is replaced: a FIFO, a device node or a socket throws {@link NotRegularFileError} (naming `shown`)
 * and stays as it is. Throws Node fs errors otherwise.
 */
export async function replaceIn(dir: HeldDir, name: string, data: string | Uint8Array, shown: string): Promise<void> {
  let existing: Stats | undefined;
  try {
    existing = lstatSync(dir.at(name));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  // A link that appeared since it was located is replaced, not followed: only a file that is not regular stays.
  if (existing && !existing.isFile() && !existing.isSymbolicLink()) throw new NotRegularFileError(shown, existing);
  const keep = existing?.isFile() ? existing : undefined;
  const temp = `.${name.slice(0, 200)}.crow-${randomBytes(6).toString("hex")}.tmp`;
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;
  const fd = openSync(dir.at(temp), flags, keep ? keep.mode & 0o7777 : 0o666);
  try {
    try {
      const bytes = typeof data === "string" ? Buffer.from(data) : data;
      for (let done = 0; done < bytes.length; ) {
        const chunk = bytes.subarray(done, done + 1024 * 1024);
        done += bytes.length <= SYNC_IO_LIMIT ? writeSync(fd, chunk) : (await writeChunk(fd, chunk)).bytesWritten;
      }
      if (keep) {
        fchmodSync(fd, keep.mode & 0o7777);
        try {
          fchownSync(fd, keep.uid, keep.gid);
        } catch {
          // Not permitted (another user's file): it is now ours, as any editor's save would make it.
        }
      }
    } finally {
      closeSync(fd);
    }
    renameSync(dir.at(temp), dir.at(name));
  } catch (error) {
    try {
      unlinkSync(dir.at(temp));
    } catch {
      // Already gone (renamed, or never created).
    }
    throw error;
  }
}
