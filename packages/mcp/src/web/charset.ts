/** How many leading bytes are scanned for `<meta charset>` (the HTML spec's prescan looks at 1024; be generous). */
const META_SCAN_BYTES = 4096;

/** The `charset` parameter of a Content-Type header, lower-cased, if any. */
export function charsetFromContentType(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? "");
  return match?.[1]?.toLowerCase();
}

/** The encoding an HTML page declares in `<meta charset>` or `<meta http-equiv="Content-Type" content="…">`. */
export function charsetFromMeta(bytes: Uint8Array): string | undefined {
  // Latin-1 maps every byte to one char, so ASCII markup is readable whatever the real encoding is.
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, META_SCAN_BYTES)).toString("latin1");
  for (const tag of head.match(/<meta\b[^>]*>/gi) ?? []) {
    const direct = /\bcharset\s*=\s*["']?\s*([\w.:-]+)/i.exec(tag);
    // A page that really is UTF-16 starts with a BOM; a meta tag claiming UTF-16 is read as UTF-8, as browsers do.
    if (direct?.[1]) return direct[1].toLowerCase().startsWith("utf-16") ? "utf-8" : direct[1].toLowerCase();
  }
  return undefined;
}

/** The encoding a byte-order mark announces, if the bytes start with one (it overrides any declaration). */
function charsetFromBom(bytes: Uint8Array): string | undefined {
  if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return "utf-8";
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return "utf-16le";
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return "utf-16be";
  return undefined;
}

/**
 * Decodes a response body to text. Precedence as browsers do it: byte-order mark, then the Content-Type charset,
 * then (for HTML) `<meta>`, then UTF-8. Labels go through TextDecoder, which knows the WHATWG names and aliases
 * (`latin1`, `shift_jis`, `gbk`, `windows-1251`…); an unknown label falls back to UTF-8 rather than failing.
 */
export function decodeBody(bytes: Uint8Array, contentType: string | undefined, html: boolean): string {
  const label =
    charsetFromBom(bytes) ??
    charsetFromContentType(contentType) ??
    (html ? charsetFromMeta(bytes) : undefined) ??
    "utf-8";
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label);
  } catch {
    decoder = new TextDecoder("utf-8");
  }
  return decoder.encoding === "windows-1252" ? decodeWindows1252(bytes) : decoder.decode(bytes);
}

/** Characters of windows-1252 bytes 0x80-0x9F (where it differs from ISO-8859-1); "\uFFFD" for the 5 unused bytes. */
const CP1252_HIGH =
  "\u20AC\uFFFD\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\uFFFD\u017D\uFFFD" +
  "\uFFFD\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\uFFFD\u017E\u0178";

/**
 * windows-1252, which the WHATWG Encoding standard uses for every "latin1"/"iso-8859-1"/"ascii" label. Node 20's
 * TextDecoder decodes it as ISO-8859-1, turning € œ “ ” – into invisible C1 controls, so map 0x80-0x9F here.
 */
export function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  return latin1.replace(/[\x80-\x9f]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80] ?? c);
}
