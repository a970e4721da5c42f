/**
 * Unpacks a gzipped tar (npm package tarballs, `.well-known` skill archives) into a folder. Regular files and folders
 * only: links, devices and entries whose path is absolute or climbs out with `..` are skipped and reported, so an
 * archive can never write outside its folder. Decompression stops at {@link unpackLimit} (a gzip bomb is refused
 * with a clear error, never held whole), and so does the sum of the entries' sizes.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { gunzipSync } from "node:zlib";
import { errorText } from "@crow/core";
import { SourceError } from "./errors.js";
import { MAX_RATIO, mib, unpackLimit } from "./limits.js";

/** Unpacks `archive` (tar or tar.gz bytes) into `dir`; returns the entries it refused. `what` names it in errors. */
export async function unpackTar(archive: Buffer, dir: string, what: string): Promise<string[]> {
  const limit = unpackLimit(archive.length);
  const tooLarge = () =>
    new SourceError(
      `${what}: the archive unpacks to more than ${mib(limit)} MiB (${archive.length} bytes downloaded; at most ` +
        `${MAX_RATIO} times that, up to ${mib(unpackLimit(Number.POSITIVE_INFINITY))} MiB): refused, nothing installed`,
    );
  let data = archive;
  if (archive[0] === 0x1f && archive[1] === 0x8b) {
    try {
      data = gunzipSync(archive, { maxOutputLength: limit });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE") throw tooLarge();
      throw new SourceError(`${what}: the archive is not a valid gzip file (${errorText(error)})`);
    }
  } else if (archive.length > limit) throw tooLarge();
  const skipped: string[] = [];
  let offset = 0;
  let longName: string | undefined;
  while (offset + 512 <= data.length) {
    const header = data.subarray(offset, offset + 512);
    if (header.every((b) => b === 0)) break;
    const size = Number.parseInt(field(header, 124, 12).trim() || "0", 8);
    const type = String.fromCharCode(header[156] ?? 0);
    const prefix = field(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${field(header, 0, 100)}` : field(header, 0, 100));
    longName = undefined;
    const body = data.subarray(offset + 512, offset + 512 + size);
    offset += 512 + Math.ceil(size / 512) * 512;
    if (type === "x") {
      // A pax header: its `path` record names the next entry.
      const match = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(body.toString("utf8"));
      if (match) longName = match[1];
      continue;
    }
    if (type === "L") {
      longName = body.toString("utf8").replace(/\0+$/, "");
      continue;
    }
    if (type === "g") continue;
    const rel = name.replace(/^\.\//, "");
    const parts = rel.split("/").filter((p) => p !== "" && p !== ".");
    if (path.isAbsolute(rel) || parts.includes("..") || parts.length === 0) {
      skipped.push(name);
      continue;
    }
    const target = path.join(dir, ...parts);
    if (type === "5") await mkdir(target, { recursive: true });
    else if (type === "0" || type === "\0" || type === "7") {
      await mkdir(path.dirname(target), { recursive: true });
      const mode = Number.parseInt(field(header, 100, 8).trim() || "644", 8);
      await writeFile(target, body, { mode: mode & 0o111 ? 0o755 : 0o644 });
    } else skipped.push(name);
  }
  return skipped;
}

function field(header: Buffer, start: number, length: number): string {
  const raw = header.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString("utf8");
}
