/** What the first bytes of a file say it is. Pure functions, unit-tested on their own. */
import { isUtf8 } from "node:buffer";

export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

/** Recognizes the image formats vision models accept, by magic number (never by extension). */
export function sniffImage(head: Uint8Array): ImageMime | undefined {
  const ascii = (from: number, to: number) => String.fromCharCode(...head.subarray(from, to));
  if (head.length >= 8 && head[0] === 0x89 && ascii(1, 4) === "PNG" && head[4] === 0x0d && head[5] === 0x0a) {
    return "image/png";
  }
  if (head.length >= 3 && head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return "image/jpeg";
  if (head.length >= 6 && (ascii(0, 6) === "GIF87a" || ascii(0, 6) === "GIF89a")) return "image/gif";
  if (head.length >= 12 && ascii(0, 4) === "RIFF" && ascii(8, 12) === "WEBP") return "image/webp";
  return undefined;
}

/** Classification of a file's first bytes for the read tool. */
export type ContentKind = "empty" | "text" | "binary" | "not-utf8";

/**
 * Classifies the first bytes of a file. A NUL byte or a high share of control characters means binary;
 * otherwise bytes that are not valid UTF-8 mean text in another encoding. A multibyte character cut at the end
 * of the probe is not held against the file (upstream reported such files as binary).
 */
export function classifyHead(head: Uint8Array): ContentKind {
  if (head.length === 0) return "empty";
  if (head.includes(0)) return "binary";
  const complete = head.subarray(0, head.length - cutSequenceLength(head));
  if (!isUtf8(complete)) return controlRatio(latin1(head)) > 0.3 ? "binary" : "not-utf8";
  return controlRatio(utf8(complete)) > 0.3 ? "binary" : "text";
}

/** How many bytes at the end of `bytes` are the start of a UTF-8 sequence the probe cut off (0 if none). */
function cutSequenceLength(bytes: Uint8Array): number {
  for (let back = 1; back <= Math.min(3, bytes.length); back++) {
    const byte = bytes[bytes.length - back] ?? 0;
    if ((byte & 0xc0) === 0x80) continue; // a continuation byte: the lead is further back
    const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return length > back ? back : 0;
  }
  return 0;
}

function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
}

function latin1(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
}

/** Share of characters below 32 other than tab, newline, vertical tab, form feed and carriage return. */
function controlRatio(text: string): number {
  if (text.length === 0) return 0;
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 9 || (code > 13 && code < 32)) control++;
  }
  return control / text.length;
}

/**
 * Decodes a whole file as UTF-8, or reports where it stops being UTF-8 (1-based line number of the first bad
 * byte) so the model can be told precisely what is wrong.
 */
export function decodeUtf8(bytes: Uint8Array): { ok: true; text: string } | { ok: false; line: number } {
  // isUtf8 and Buffer's decoder rather than a fatal TextDecoder, whose construction costs more than checking and
  // decoding a small file. The BOM is dropped as TextDecoder does.
  if (!isUtf8(bytes)) return { ok: false, line: firstInvalidLine(bytes) };
  const text = utf8(bytes);
  return { ok: true, text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text };
}

function firstInvalidLine(bytes: Uint8Array): number {
  let line = 1;
  let start = 0;
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (let i = 0; i <= bytes.length; i++) {
    if (i === bytes.length || bytes[i] === 0x0a) {
      try {
        decoder.decode(bytes.subarray(start, i));
      } catch {
        return line;
      }
      line++;
      start = i + 1;
    }
  }
  return line;
}
