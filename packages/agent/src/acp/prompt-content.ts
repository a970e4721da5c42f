/**
 * ACP prompt content → the user message's OpenAI content parts. Minimal but correct: text, images (data, `file://`,
 * `http(s)://`), embedded resources, and resource links to local files (line ranges `#L10:20`, directories listed).
 * The rich-content issue extends this module.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ContentBlock } from "@agentclientprotocol/sdk";
import type { ContentPart } from "@crow/core";

/** A prompt the agent cannot take (e.g. audio); the message is for the user. */
export class PromptContentError extends Error {}

/** Largest file a resource link inlines (bigger files are cut with a note). */
export const MAX_LINKED_BYTES = 256 * 1024;
const MAX_LISTED_ENTRIES = 500;

const IMAGE_TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

/** Parses `#L10:20`, `#L10-20` or `#L10` (line 10 to the end, as upstream) at the end of a URI. */
export function lineRange(uri: string): { base: string; start?: number; end?: number } {
  const match = /#L(\d+)?(?:[:-]L?(\d+))?$/.exec(uri);
  if (!match) return { base: uri };
  const base = uri.slice(0, match.index);
  const start = match[1] ? Number(match[1]) : undefined;
  const end = match[2] ? Number(match[2]) : undefined;
  return { base, ...(start !== undefined ? { start } : {}), ...(end !== undefined ? { end } : {}) };
}

function localPath(uri: string, cwd: string): string | undefined {
  if (uri.startsWith("file://")) return fileURLToPath(uri);
  if (/^[a-z][a-z0-9+.-]*:/i.test(uri)) return undefined;
  return path.resolve(cwd, uri);
}

/** A linked local file or directory as text (or an image part). Errors become text the model can read. */
async function linkedFile(uri: string, file: string, start?: number, end?: number): Promise<ContentPart> {
  try {
    const info = await stat(file);
    if (info.isDirectory()) {
      const entries = await readdir(file, { withFileTypes: true });
      const names = entries
        .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
        .sort()
        .slice(0, MAX_LISTED_ENTRIES);
      const more = entries.length > MAX_LISTED_ENTRIES ? `\n… and ${entries.length - MAX_LISTED_ENTRIES} more` : "";
      return { type: "text", text: `Directory ${file}:\n${names.join("\n")}${more}` };
    }
    const mime = IMAGE_TYPES[path.extname(file).toLowerCase()];
    if (mime && info.size <= 10 * 1024 * 1024) {
      const data = (await readFile(file)).toString("base64");
      return { type: "image_url", image_url: { url: `data:${mime};base64,${data}` } };
    }
    const bytes = await readFile(file);
    const cut = bytes.length > MAX_LINKED_BYTES;
    let text = bytes.subarray(0, MAX_LINKED_BYTES).toString("utf8");
    let range = "";
    if (start !== undefined) {
      const lines = text.split("\n");
      const last = Math.min(end ?? lines.length, lines.length);
      text = lines.slice(start - 1, last).join("\n");
      range = ` (lines ${start}-${last})`;
    }
    const note = cut && start === undefined ? `\n[… cut at ${MAX_LINKED_BYTES} bytes of ${bytes.length}]` : "";
    return { type: "text", text: `File ${file}${range}:\n${text}${note}` };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { type: "text", text: `[Linked resource ${uri} could not be read: ${reason}]` };
  }
}

/** Converts one ACP block. */
async function convert(block: ContentBlock, cwd: string): Promise<ContentPart | undefined> {
  switch (block.type) {
    case "text":
      return block.text.trim() ? { type: "text", text: block.text } : undefined;
    case "image": {
      if (block.data) return { type: "image_url", image_url: { url: `data:${block.mimeType};base64,${block.data}` } };
      if (block.uri && /^https?:\/\//i.test(block.uri)) return { type: "image_url", image_url: { url: block.uri } };
      const file = block.uri ? localPath(block.uri, cwd) : undefined;
      if (file) return linkedFile(block.uri ?? file, file);
      return undefined;
    }
    case "audio":
      throw new PromptContentError("Audio prompts are not supported by this agent; send text or images instead.");
    case "resource_link": {
      const { base, start, end } = lineRange(block.uri);
      const file = localPath(base, cwd);
      if (!file) return { type: "text", text: `[Resource: ${block.name}](${block.uri})` };
      return linkedFile(block.uri, file, start, end);
    }
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return { type: "text", text: `file_location: ${resource.uri}\n${resource.text}` };
      if (resource.mimeType?.startsWith("image/")) {
        return { type: "image_url", image_url: { url: `data:${resource.mimeType};base64,${resource.blob}` } };
      }
      return {
        type: "text",
        text: `[Binary resource ${resource.uri} (${resource.mimeType ?? "unknown type"}) omitted]`,
      };
    }
  }
}

/**
 * The user message content for a prompt. A prompt of plain text blocks becomes one string (what most providers
 * expect); anything richer becomes a parts array. Throws `PromptContentError` for content the agent refuses.
 */
export async function promptContent(blocks: readonly ContentBlock[], cwd: string): Promise<string | ContentPart[]> {
  const parts: ContentPart[] = [];
  for (const block of blocks) {
    const part = await convert(block, cwd);
    if (part) parts.push(part);
  }
  if (parts.every((p) => p.type === "text")) return parts.map((p) => (p as { text: string }).text).join("\n\n");
  return parts;
}

/** The text of a prompt that is a single text block (slash commands are only recognised in that form). */
export function singleText(blocks: readonly ContentBlock[]): string | undefined {
  const [first, ...rest] = blocks;
  return first?.type === "text" && rest.length === 0 ? first.text : undefined;
}
