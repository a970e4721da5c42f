/**
 * Reading the local files a prompt points at (resource links, image URIs) under the read tool's rules: regular files
 * only, a size cap applied while reading, and cancellable. A link to /dev/zero would otherwise be read until memory
 * runs out, and one to a FIFO would block a thread-pool thread until some writer appears.
 */
import { constants, type Stats } from "node:fs";
import { open } from "node:fs/promises";

/** Bytes read per call, between which a cancellation is noticed. */
const CHUNK = 64 * 1024;

/** What kind of file a non-regular file is, for the message that refuses it. */
export function fileKind(info: Stats): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a named pipe (FIFO)";
  if (info.isCharacterDevice()) return "a character device";
  if (info.isBlockDevice()) return "a block device";
  if (info.isSocket()) return "a socket";
  return "not a regular file";
}

/** A file that is not a regular file (a device, a FIFO, a socket): it is not read. */
export class NotRegularFileError extends Error {
  constructor(file: string, kind: string) {
    super(`${file} is ${kind}, not a regular file; only regular files are read`);
  }
}

/**
 * Reads at most `max` bytes of the regular file `file` and tells its full size. The file is opened non-blocking (a
 * FIFO then opens at once instead of waiting for a writer) and checked on the open descriptor, so what is checked is
 * what is read. Throws {@link NotRegularFileError} for anything but a regular file, and the signal's reason once it
 * aborts.
 */
export async function readRegularFile(
  file: string,
  max: number,
  signal?: AbortSignal,
): Promise<{ bytes: Buffer; size: number }> {
  signal?.throwIfAborted();
  const handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw new NotRegularFileError(file, fileKind(info));
    const wanted = Math.min(info.size, max);
    const buffer = Buffer.alloc(wanted);
    let filled = 0;
    while (filled < wanted) {
      signal?.throwIfAborted();
      const { bytesRead } = await handle.read(buffer, filled, Math.min(CHUNK, wanted - filled), filled);
      if (bytesRead === 0) break; // the file shrank while being read
      filled += bytesRead;
    }
    return { bytes: buffer.subarray(0, filled), size: info.size };
  } finally {
    await handle.close();
  }
}
