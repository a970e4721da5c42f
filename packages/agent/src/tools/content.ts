import type { ContentPart, ToolResult } from "@crow/core";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

type Block = CallToolResult["content"][number];

/** A size for messages: "1.2 KB". */
function size(base64: string): string {
  const bytes = Math.floor((base64.length * 3) / 4);
  return bytes < 1024 ? `${bytes} bytes` : `${(bytes / 1024).toFixed(1)} KB`;
}

function imagePart(mimeType: string, data: string): ContentPart {
  return { type: "image_url", image_url: { url: `data:${mimeType};base64,${data}` } };
}

/** One MCP content block as model content: text and images as such, the rest described in text. */
function toPart(block: Block): ContentPart {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image":
      return imagePart(block.mimeType, block.data);
    case "audio":
      return { type: "text", text: `[audio (${block.mimeType}, ${size(block.data)}) not shown]` };
    case "resource_link":
      return {
        type: "text",
        text: `[resource link: ${block.name} ${block.uri}${block.description ? ` — ${block.description}` : ""}]`,
      };
    case "resource": {
      const resource = block.resource;
      if ("text" in resource) return { type: "text", text: `[resource ${resource.uri}]\n${resource.text}` };
      if (resource.mimeType?.startsWith("image/")) return imagePart(resource.mimeType, resource.blob);
      return {
        type: "text",
        text: `[binary resource ${resource.uri} (${resource.mimeType ?? "unknown type"}, ${size(resource.blob)}) not shown]`,
      };
    }
    default:
      return { type: "text", text: `[unsupported content type: ${(block as { type: string }).type}]` };
  }
}

/**
 * An MCP tool result as the loop's {@link ToolResult}: text only → one string (the form every provider accepts in a
 * tool message); with images → parts. `isError` is kept. An empty result says so instead of sending "".
 * `structuredContent` is used only when there is no content (servers must mirror it as text anyway).
 */
export function fromMcpResult(result: CallToolResult): ToolResult {
  const parts = (result.content ?? []).map(toPart);
  if (parts.length === 0 && result.structuredContent !== undefined) {
    parts.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  const isError = result.isError === true;
  if (parts.every((p) => p.type === "text")) {
    const text = parts.map((p) => (p as { text: string }).text).join("\n");
    return { content: text === "" ? "(no output)" : text, ...(isError ? { isError } : {}) };
  }
  return { content: parts, ...(isError ? { isError } : {}) };
}

/** The text of a tool result's content (images left out). */
export function resultText(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content
    .filter((p): p is { type: "text"; text: string } => p.type === "text")
    .map((p) => p.text)
    .join("\n");
}
