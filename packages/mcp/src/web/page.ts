import { decodeBody } from "./charset.js";
import { type FetchedResponse, formatBytes } from "./http.js";

/** What web_fetch shows for one URL before pagination. */
export type PageContent =
  | {
      kind: "text";
      /** Header line(s) placed before every page slice, e.g. "Contents of https://…:\n". */
      header: string;
      /** The full text that start_index/max_length slice. */
      text: string;
    }
  | { kind: "image"; header: string; mimeType: string; data: string };

/** MIME types shown to the model as images (what vision models accept). */
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** What a binary type is called in the message saying it cannot be shown. */
const BINARY_NAMES: Array<[RegExp, string]> = [
  [/^application\/pdf/, "a PDF document"],
  [/^image\//, "an image"],
  [/^audio\//, "an audio file"],
  [/^video\//, "a video"],
  [/^font\//, "a font"],
  [/zip|gzip|x-tar|x-7z|x-rar|x-bzip|x-xz|compressed/, "an archive"],
  [/msword|officedocument|opendocument|ms-excel|ms-powerpoint/, "an office document"],
];

/** Content types that are text even though they are not text/*. */
const TEXTUAL =
  /^text\/|[/+](json|xml|javascript|ecmascript|yaml|x-yaml|toml|csv|x-sh|sql|graphql|markdown|x-ndjson)\b/;

/** The media type of a Content-Type header (lower-cased, without parameters). */
export function mediaType(contentType: string | undefined): string {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
}

/**
 * Whether a body is HTML: an HTML content type, or (for a missing, text/plain or octet-stream type) a body that
 * starts like an HTML document — servers mislabel pages, and upstream sniffed the same way.
 */
export function isHtml(contentType: string | undefined, bytes: Uint8Array): boolean {
  const type = mediaType(contentType);
  if (type === "text/html" || type === "application/xhtml+xml") return true;
  if (type !== "" && type !== "text/plain" && type !== "application/octet-stream") return false;
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 512)).toString("latin1");
  return /^(?:\uFEFF|\xEF\xBB\xBF)?\s*(?:<!--[\s\S]*?-->\s*)*(?:<!doctype\s+html|<html[\s>])/i.test(head);
}

/** Whether bytes of a non-HTML response can be shown as text. */
function isTextual(contentType: string | undefined, bytes: Uint8Array): boolean {
  const type = mediaType(contentType);
  if (TEXTUAL.test(type)) return true;
  if (type !== "" && type !== "application/octet-stream") return false;
  // Unknown or generic type: text unless the first bytes contain NUL (the usual sign of a binary format).
  return !bytes.subarray(0, 8192).includes(0);
}

/**
 * Turns a fetched response into what web_fetch pages through. HTML becomes Markdown (or, with `raw`, the decoded
 * HTML itself); other text is passed through under a "Content type:" line; images become image content; other
 * binary types get a sentence saying what they are instead of their bytes.
 */
export async function renderPage(requestedUrl: string, response: FetchedResponse, raw: boolean): Promise<PageContent> {
  const type = mediaType(response.contentType);
  const via = response.url !== requestedUrl ? ` (redirected to ${response.url})` : "";
  const shownType = response.contentType ?? "unknown";
  if (isHtml(response.contentType, response.body)) {
    const html = decodeBody(response.body, response.contentType, true);
    if (raw) return { kind: "text", header: `Raw HTML from ${requestedUrl}${via}:\n`, text: html };
    // Loaded on first use: the DOM and Markdown libraries cost crow-mcp ~35 MB and ~200 ms at startup otherwise.
    const { htmlToMarkdown } = await import("./convert.js");
    const page = htmlToMarkdown(html, response.url);
    const text =
      page.markdown.trim() === ""
        ? "<error>Failed to parse HTML: the page has no readable text.</error>"
        : page.markdown;
    return { kind: "text", header: `Contents of ${requestedUrl}${via}:\n`, text };
  }
  if (IMAGE_TYPES.has(type)) {
    return {
      kind: "image",
      header: `Content type: ${shownType}\nImage from ${requestedUrl}${via} (${formatBytes(response.body.length)}).`,
      mimeType: type,
      data: Buffer.from(response.body).toString("base64"),
    };
  }
  if (isTextual(response.contentType, response.body)) {
    return {
      kind: "text",
      header: `Content type: ${shownType}\nContents of ${requestedUrl}${via}:\n`,
      text: decodeBody(response.body, response.contentType, false),
    };
  }
  const name = BINARY_NAMES.find(([pattern]) => pattern.test(type))?.[1] ?? "binary data";
  const hint = type === "application/pdf" ? " and convert it, e.g. pdftotext /tmp/download -" : "";
  return {
    kind: "text",
    header: `Content type: ${shownType}\n`,
    text: `${requestedUrl}${via} is ${name} (${formatBytes(response.body.length)}), which cannot be shown as text. To inspect it, download it with the terminal (curl -sL -o /tmp/download '${response.url}')${hint}.`,
  };
}

/**
 * One page of `text`, as upstream paged it: the slice `[start, start+max)`, a truncation notice naming the next
 * start_index when more remains, and "No more content available" past the end.
 */
export function paginate(header: string, text: string, startIndex: number, maxLength: number): string {
  if (startIndex >= text.length && !(startIndex === 0 && text.length === 0)) {
    return `${header}<error>No more content available. The content is ${text.length} characters long; start_index ${startIndex} is past its end.</error>`;
  }
  const slice = text.slice(startIndex, startIndex + maxLength);
  const next = startIndex + slice.length;
  let out = `${header}${slice}`;
  if (next < text.length) {
    out += `\n\n<error>Content truncated (showing characters ${startIndex}-${next} of ${text.length}). Call web_fetch with start_index=${next} to get more content.</error>`;
  }
  return out;
}
