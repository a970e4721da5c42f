/**
 * Repair of tool-call argument text. Models (and truncated streams) produce JSON with code fences, trailing
 * commas, unclosed strings/brackets, single-line comments or Python literals. `parseToolArguments` tries the text
 * as is, then a repaired version; it never throws.
 */
import { errorText } from "../error-text.js";
import type { ToolCall } from "../messages.js";

/** The outcome of parsing a tool call's argument text. */
export type ParsedArguments =
  | { ok: true; value: Record<string, unknown>; repaired: boolean; text: string }
  | { ok: false; error: string };

/** Strips a Markdown code fence (```json … ```) around the text. */
function stripFence(text: string): string {
  const match = /^\s*```[a-zA-Z0-9_-]*\s*\n?([\s\S]*?)\n?\s*(```\s*)?$/.exec(text);
  return match?.[1] !== undefined && text.trimStart().startsWith("```") ? match[1] : text;
}

/**
 * Best-effort structural repair: drops comments and trailing commas, maps Python literals outside strings,
 * closes an unterminated string and every unclosed bracket in the right order. Works in one pass over the text.
 */
export function repairJson(input: string): string {
  let text = stripFence(input).trim();
  // Keep only the outermost value: a model sometimes adds prose after the object.
  const start = text.search(/[{[]/);
  if (start > 0) text = text.slice(start);
  let out = "";
  const stack: string[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i] as string;
    if (inString) {
      out += ch;
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
      else if (ch === "\n") out = `${out.slice(0, -1)}\\n`;
      continue;
    }
    if (ch === '"') {
      inString = true;
      out += ch;
    } else if (ch === "/" && text[i + 1] === "/") {
      while (i < text.length && text[i] !== "\n") i++;
    } else if (ch === "{" || ch === "[") {
      stack.push(ch === "{" ? "}" : "]");
      out += ch;
    } else if (ch === "}" || ch === "]") {
      out = out.replace(/,\s*$/, "");
      if (stack.length > 0 && stack[stack.length - 1] === ch) stack.pop();
      else if (stack.length === 0)
        break; // stray closer after the value: ignore the rest
      else continue; // mismatched closer: skip it, the right one is added at the end
      out += ch;
      if (stack.length === 0) break;
    } else if (/[A-Za-z]/.test(ch)) {
      const word = /^[A-Za-z_]+/.exec(text.slice(i))?.[0] ?? ch;
      const mapped = { True: "true", False: "false", None: "null" }[word] ?? word;
      out += mapped;
      i += word.length - 1;
    } else {
      out += ch;
    }
  }
  if (inString) {
    if (escaped) out = out.slice(0, -1);
    out += '"';
  }
  // A dangling key or separator at the cut point: `{"a": ` or `{"a"` or `{"a": 1,`.
  out = out.replace(/,\s*$/, "").replace(/:\s*$/, ": null");
  if (stack[stack.length - 1] === "}" && /[{,]\s*"(?:[^"\\]|\\.)*"$/.test(out)) out += ": null";
  while (stack.length > 0) out += stack.pop();
  return out;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Parses a tool call's argument text into an object. Empty text means `{}`. A JSON string holding an object
 * (double encoding) is unwrapped. Returns the normalised text to store in the assistant message.
 */
export function parseToolArguments(text: string): ParsedArguments {
  if (text.trim() === "") return { ok: true, value: {}, repaired: false, text: "{}" };
  const attempt = (candidate: string): Record<string, unknown> | undefined => {
    try {
      let value: unknown = JSON.parse(candidate);
      if (typeof value === "string" && /^\s*\{/.test(value)) value = JSON.parse(value);
      return isRecord(value) ? value : undefined;
    } catch {
      return undefined;
    }
  };
  const direct = attempt(text);
  if (direct) return { ok: true, value: direct, repaired: false, text };
  const repairedText = repairJson(text);
  const repaired = attempt(repairedText);
  if (repaired) return { ok: true, value: repaired, repaired: true, text: JSON.stringify(repaired) };
  let reason = "not a JSON object";
  try {
    JSON.parse(text);
  } catch (error) {
    reason = errorText(error);
  }
  return { ok: false, error: reason };
}

/**
 * The arguments of a tool call already in the history, as an object: the loop stored them as `parseToolArguments`
 * normalised them, or as the model wrote them when they could not be parsed (then undefined, as for a non-object).
 */
export function callArguments(call: ToolCall): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(call.function.arguments);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}
