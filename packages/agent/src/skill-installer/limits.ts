/**
 * How much `crow skills` takes from a source before refusing it: downloads are read as a stream and cut at their cap
 * (a Content-Length over it is refused before reading), archives are unpacked only up to a size that also depends on
 * how small they came (a gzip bomb unpacks a thousand times its size; real skills, a few times). Skills are
 * instructions and a few files: these caps sit far above any real one.
 */
import { SourceError } from "./errors.js";

const MiB = 1024 * 1024;

/** An index, a SKILL.md, a marketplace or lock file, an npm packument. */
export const MAX_DOCUMENT_BYTES = 8 * MiB;
/** A tarball or archive as downloaded. */
export const MAX_DOWNLOAD_BYTES = 64 * MiB;
/** Everything one archive or one git tree unpacks to. */
export const MAX_UNPACKED_BYTES = 256 * MiB;
/** How many times its download size an archive may unpack to, above {@link MIN_UNPACK_ALLOWANCE}. */
export const MAX_RATIO = 100;
/** What any archive may unpack to, however small it came. */
const MIN_UNPACK_ALLOWANCE = 16 * MiB;

/** Whole MiB, for messages. */
export function mib(bytes: number): number {
  return Math.round(bytes / MiB);
}

/** What an archive of `compressed` bytes may unpack to. */
export function unpackLimit(compressed: number): number {
  return Math.min(MAX_UNPACKED_BYTES, Math.max(MIN_UNPACK_ALLOWANCE, compressed * MAX_RATIO));
}

/**
 * The body of `response`, read as it arrives and refused once it passes `max` bytes (`what` and `url` name it in the
 * error). The connection is dropped at that point: nothing past the cap is held.
 */
export async function readCapped(response: Response, max: number, what: string, url: string): Promise<Buffer> {
  const tooLarge = () =>
    new SourceError(`${what} from ${url} is larger than ${mib(max)} MiB: refused, nothing installed`);
  const declared = Number(response.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > max) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > max) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks, total);
}
