/**
 * ACP prompt content → the user message's OpenAI content parts:
 * - text (empty blocks dropped);
 * - images from base64 data, a `file://` (or relative) path, or an `http(s)://` URL fetched here and sent as a data
 *   URL (providers differ in whether they fetch URLs themselves, and a local server usually cannot reach the web);
 * - embedded resources (text inlined with its location, image blobs as images, other blobs noted);
 * - resource links to local files (as the read tool gives them: a whole file as it is, a `#L10:20` selection with its
 *   lines numbered), images, and directories (a listing: upstream crashed on folders);
 * - audio as `input_audio` when the model takes it, otherwise refused with a message naming the model.
 * Problems reading a link or fetching an image become text the model can read, so the turn still runs.
 * Local files are read under the read tool's rules (regular files only, capped while reading: prompt-files.ts) and
 * URLs fetched under web_fetch's (`@crow/mcp/guarded-fetch`: address guard, size cap, deadline); all of it stops
 * when the turn is cancelled.
 */
import { type Dirent, existsSync } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import { type ContentPart, errorText } from "@crow/core";
import { fetchUrl, ResponseRefused, WebError } from "@crow/mcp/guarded-fetch";
import { DEFAULT_LINE_LIMIT, formatLines } from "@crow/mcp/read-format";
import { fileKind, readRegularFile } from "./prompt-files.js";

/** A prompt the agent cannot take (e.g. audio for a text-only model); the message is for the user. */
export class PromptContentError extends Error {}

/** Largest file a resource link inlines (bigger files are cut with a note). */
export const MAX_LINKED_BYTES = 256 * 1024;
/** Largest image read from disk or fetched. */
export const MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const MAX_LISTED_ENTRIES = 500;
// A prompt's image URL, fetched before the turn starts (the user waits): a shorter deadline and fewer redirects than
// web_fetch's (30 s, 10), whose pages the model asked for mid-turn.
const IMAGE_FETCH_TIMEOUT_MS = 20_000;
const IMAGE_FETCH_MAX_REDIRECTS = 5;

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".bmp": "image/bmp",
  ".svg": "image/svg+xml",
};

const AUDIO_FORMATS: Record<string, "wav" | "mp3"> = {
  "audio/wav": "wav",
  "audio/x-wav": "wav",
  "audio/wave": "wav",
  "audio/vnd.wave": "wav",
  "audio/mpeg": "mp3",
  "audio/mp3": "mp3",
};

export interface PromptContentOptions {
  /** The model the prompt goes to (named in refusals). */
  model?: string;
  /** The model accepts `input_audio` parts (default false: audio is refused). */
  audio?: boolean;
  /** Aborts file reads and image downloads (the turn was cancelled): `promptContent` then rejects. */
  signal?: AbortSignal;
  /**
   * The session's other workspace roots: a relative path that names nothing in the cwd is looked for in them, in
   * order (an `@src/x.ts` of a second repository opened next to the first).
   */
  additionalDirectories?: readonly string[];
}

/** Parses `#L10:20`, `#L10-20` or `#L10` (line 10 to the end, as upstream) at the end of a URI. */
export function lineRange(uri: string): { base: string; start?: number; end?: number } {
  const match = /#L(\d+)?(?:[:-]L?(\d+))?$/.exec(uri);
  if (!match) return { base: uri };
  const base = uri.slice(0, match.index);
  const start = match[1] ? Number(match[1]) : undefined;
  const end = match[2] ? Number(match[2]) : undefined;
  return { base, ...(start !== undefined ? { start } : {}), ...(end !== undefined ? { end } : {}) };
}

/**
 * The local path a URI names (`file://`, or a path relative to the session's cwd, else to the first other workspace
 * root where it exists), or undefined for other schemes.
 */
function localPath(uri: string, cwd: string, roots: readonly string[] = []): string | undefined {
  if (uri.startsWith("file://")) return fileURLToPath(uri);
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) return undefined;
  const inCwd = path.resolve(cwd, uri);
  if (path.isAbsolute(uri) || roots.length === 0 || existsSync(inCwd)) return inCwd;
  return roots.map((root) => path.resolve(root, uri)).find((file) => existsSync(file)) ?? inCwd;
}

const text = (value: string): ContentPart => ({ type: "text", text: value });
const image = (mime: string, base64: string): ContentPart => ({
  type: "image_url",
  image_url: { url: `data:${mime};base64,${base64}` },
});

/** A directory as a sorted one-level listing (subdirectories end with `/`). */
async function listing(dir: string): Promise<ContentPart> {
  const entries: Dirent[] = await readdir(dir, { withFileTypes: true });
  const names = entries.map((e) => (e.isDirectory() ? `${e.name}/` : e.name)).sort();
  const shown = names.slice(0, MAX_LISTED_ENTRIES);
  const more = names.length > shown.length ? `\n… and ${names.length - shown.length} more` : "";
  const body = shown.length > 0 ? shown.join("\n") : "(empty)";
  return text(`Directory ${dir} (${names.length} entries):\n${body}${more}`);
}

/** A linked local file or directory as text (or an image part). Errors become text the model can read. */
async function linkedFile(
  uri: string,
  file: string,
  start: number | undefined,
  end: number | undefined,
  signal: AbortSignal | undefined,
): Promise<ContentPart> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) return await listing(file);
    if (!info.isFile()) return text(`[Linked resource ${uri} is ${fileKind(info)}, not a regular file; not read]`);
    const mime = IMAGE_TYPES[path.extname(file).toLowerCase()];
    if (mime && info.size <= MAX_IMAGE_BYTES) {
      return image(mime, (await readRegularFile(file, MAX_IMAGE_BYTES, signal)).bytes.toString("base64"));
    }
    // Only the part that can be shown is read (plus nothing: the size comes from the open file).
    const { bytes: head, size } = await readRegularFile(file, MAX_LINKED_BYTES, signal);
    if (head.includes(0)) return text(`[Linked file ${file} is binary (${size} bytes); not inlined]`);
    const content = head.toString("utf8");
    const cut = size > MAX_LINKED_BYTES ? `\n[… cut at ${MAX_LINKED_BYTES} bytes of ${size}]` : "";
    // A whole file as a whole-file read gives it (read-format.ts: numbers are ~11 % of a source file's tokens, resent
    // with every later request); a selection keeps its numbers, as a read with offset and limit: the user pointed at
    // those lines, and the model cites and edits them by number.
    if (start === undefined) {
      return text(`File ${file}:\n${formatLines(content, 1, DEFAULT_LINE_LIMIT, false)}${cut}`);
    }
    const limit = end === undefined ? DEFAULT_LINE_LIMIT : Math.max(1, end - start + 1);
    const range = end === undefined ? `from line ${start}` : `lines ${start}-${end}`;
    let numbered = formatLines(content, start, limit);
    // The user asked for exactly these lines: the read tool's "file truncated" hint would only distract.
    if (end !== undefined) numbered = numbered.replace(/\n\n\[File truncated: [^\]]*\]/, "");
    return text(`File ${file} (${range}):\n${numbered}`);
  } catch (error) {
    if (signal?.aborted) throw error;
    return text(`[Linked resource ${uri} could not be read: ${errorText(error)}]`);
  }
}

/** An image file from disk as a data URL; `declared` is the block's mime type (the extension wins when known). */
async function imageFile(uri: string, file: string, declared: string, signal?: AbortSignal): Promise<ContentPart> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return text(`[Image ${uri} is not a file]`);
    if (info.size > MAX_IMAGE_BYTES) return text(`[Image ${uri} is too large (${info.size} bytes); not sent]`);
    const mime = IMAGE_TYPES[path.extname(file).toLowerCase()] ?? (declared || "image/png");
    const { bytes, size } = await readRegularFile(file, MAX_IMAGE_BYTES, signal);
    if (size > MAX_IMAGE_BYTES) return text(`[Image ${uri} is too large (${size} bytes); not sent]`);
    return image(mime, bytes.toString("base64"));
  } catch (error) {
    if (signal?.aborted) throw error;
    return text(`[Image ${uri} could not be read: ${errorText(error)}]`);
  }
}

/**
 * Downloads an image into a data URL under web_fetch's rules: the address guard (link-local and metadata addresses
 * refused, on every hop, on the address connected to), image content types only, at most {@link MAX_IMAGE_BYTES}
 * counted while reading, a deadline, and the turn's cancellation.
 */
async function fetchedImage(url: string, declared: string, signal?: AbortSignal): Promise<ContentPart> {
  try {
    let mime = "";
    const response = await fetchUrl(url, {
      timeoutMs: IMAGE_FETCH_TIMEOUT_MS,
      maxBytes: MAX_IMAGE_BYTES,
      maxRedirects: IMAGE_FETCH_MAX_REDIRECTS,
      ...(signal ? { signal } : {}),
      accept: (answer) => {
        if (answer.status >= 400) return `[Image ${url} could not be fetched: HTTP ${answer.status}]`;
        const header = answer.contentType?.split(";")[0]?.trim().toLowerCase();
        const byName = IMAGE_TYPES[path.extname(new URL(answer.url).pathname).toLowerCase()];
        mime = header?.startsWith("image/") ? header : (byName ?? (declared.startsWith("image/") ? declared : ""));
        if (!mime) return `[${url} is not an image (content type ${header ?? "unknown"}); not sent]`;
        if (answer.length > MAX_IMAGE_BYTES) return `[Image ${url} is too large (${answer.length} bytes); not sent]`;
        return undefined;
      },
    });
    return image(mime, Buffer.from(response.body).toString("base64"));
  } catch (error) {
    if (signal?.aborted) throw error;
    if (error instanceof ResponseRefused) return text(error.message);
    if (error instanceof WebError) return text(`[Image ${url} could not be fetched: ${error.message}]`);
    return text(`[Image ${url} could not be fetched: ${errorText(error)}]`);
  }
}

function audioPart(data: string, mimeType: string, options: PromptContentOptions): ContentPart {
  const model = options.model ? `The model "${options.model}"` : "This model";
  if (!options.audio) {
    throw new PromptContentError(`${model} does not accept audio input; send text (e.g. a transcript) instead.`);
  }
  const format = AUDIO_FORMATS[mimeType.toLowerCase()];
  if (!format) throw new PromptContentError(`Audio of type ${mimeType} is not supported; send WAV or MP3.`);
  return { type: "input_audio", input_audio: { data, format } };
}

/** Converts one ACP block. */
async function convert(
  block: ContentBlock,
  cwd: string,
  options: PromptContentOptions,
): Promise<ContentPart | undefined> {
  switch (block.type) {
    case "text":
      return block.text.trim() ? text(block.text) : undefined;
    case "image": {
      if (block.data) return image(block.mimeType || "image/png", block.data);
      if (!block.uri) return undefined;
      if (/^https?:\/\//i.test(block.uri)) return fetchedImage(block.uri, block.mimeType, options.signal);
      const file = localPath(block.uri, cwd, options.additionalDirectories);
      if (file) return imageFile(block.uri, file, block.mimeType, options.signal);
      return text(`[Image ${block.uri}: unsupported URI scheme; not sent]`);
    }
    case "audio":
      return audioPart(block.data, block.mimeType, options);
    case "resource_link": {
      const { base, start, end } = lineRange(block.uri);
      const file = localPath(base, cwd, options.additionalDirectories);
      if (!file) return text(`[Resource: ${block.name}](${block.uri})`);
      return linkedFile(block.uri, file, start, end, options.signal);
    }
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return text(`file_location: ${resource.uri}\n${resource.text}`);
      if (resource.mimeType?.startsWith("image/")) return image(resource.mimeType, resource.blob);
      return text(`[Binary resource ${resource.uri} (${resource.mimeType ?? "unknown type"}) omitted]`);
    }
  }
}

/**
 * The user message content for a prompt. A prompt of plain text blocks becomes one string (what most providers
 * expect); anything richer becomes a parts array. Blocks are converted in parallel (image downloads, file reads)
 * and kept in order. Throws `PromptContentError` for content the agent refuses.
 */
export async function promptContent(
  blocks: readonly ContentBlock[],
  cwd: string,
  options: PromptContentOptions = {},
): Promise<string | ContentPart[]> {
  const converted = await Promise.all(blocks.map((block) => convert(block, cwd, options)));
  const parts = converted.filter((p): p is ContentPart => p !== undefined);
  if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as { text: string }).text).join("\n\n");
  return parts;
}

/**
 * {@link promptContent}, stopped when any of `cancels` aborts (session/cancel, or the request's own cancel): resolves
 * to undefined then. A prompt that cannot be read still rejects with {@link PromptContentError}.
 */
export async function promptContentUnless(
  cancels: readonly AbortSignal[],
  blocks: readonly ContentBlock[],
  cwd: string,
  options: Omit<PromptContentOptions, "signal"> = {},
): Promise<string | ContentPart[] | undefined> {
  const reading = new AbortController();
  const stop = () => reading.abort();
  for (const cancel of cancels) {
    if (cancel.aborted) stop();
    else cancel.addEventListener("abort", stop, { once: true });
  }
  try {
    return await promptContent(blocks, cwd, { ...options, signal: reading.signal });
  } catch (error) {
    if (!(error instanceof PromptContentError) && reading.signal.aborted) return undefined;
    throw error;
  } finally {
    for (const cancel of cancels) cancel.removeEventListener("abort", stop);
  }
}

/** The text of a prompt that is a single text block (slash commands are only recognised in that form). */
export function singleText(blocks: readonly ContentBlock[]): string | undefined {
  const [first, ...rest] = blocks;
  return first?.type === "text" && rest.length === 0 ? first.text : undefined;
}
