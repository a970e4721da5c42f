/**
 * What to do about a JSON-RPC message that was too long to read (bounded-lines.ts dropped it): read what can be
 * read of it from its first and last bytes — its id, whether it was a request or a response — and build the
 * answers: an error to the sender for a request (it learns why nothing else comes), an error in place of a dropped
 * response for the side that asked (its call fails with the reason instead of waiting forever), and the line for
 * stderr that says what was dropped and why.
 */
import type { OversizeLine } from "./bounded-lines.js";

/** JSON-RPC's "Invalid Request": the message could not be taken as sent. */
export const OVERSIZE_ERROR_CODE = -32600;

export type RpcId = string | number;

export interface OversizeMessage {
  /** The request's or response's id, when it could be read from the line's ends. */
  id?: RpcId;
  /** The request's method, when it could be read. */
  method?: string;
  /** A request (has a method), a response (has a result or an error), or not known. */
  kind: "request" | "response" | "unknown";
}

const STRING = String.raw`"(?:[^"\\]|\\.)*"`;
const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
// A member that may follow `id` or `method` at the end of the object (how the MCP SDK orders a request's keys).
const TRAILING = String.raw`(?:\s*,\s*"(?:jsonrpc|id|method)"\s*:\s*(?:${STRING}|${NUMBER}))*\s*\}\s*$`;
// Not after a backslash: an escaped quote inside a string value is not a key.
const TAIL_ID = new RegExp(String.raw`(?<!\\)"id"\s*:\s*(${STRING}|${NUMBER})${TRAILING}`);
const TAIL_METHOD = new RegExp(String.raw`(?<!\\)"method"\s*:\s*(${STRING})${TRAILING}`);

/** The top-level members of the JSON object `head` starts, as far as `head` goes: scalars as their JSON text. */
function topLevelMembers(head: string): Map<string, string | undefined> {
  const members = new Map<string, string | undefined>();
  const scanner = new RegExp(String.raw`\s*(${STRING})\s*:\s*(${STRING}|${NUMBER}|true|false|null)?`, "y");
  let at = head.search(/\S/);
  if (at < 0 || head[at] !== "{") return members;
  at++;
  while (at < head.length) {
    scanner.lastIndex = at;
    const member = scanner.exec(head);
    if (!member) break;
    const key = JSON.parse(member[1] as string) as string;
    members.set(key, member[2]);
    at = scanner.lastIndex;
    if (member[2] === undefined) {
      // An object or array value: skip it (strings inside may hold brackets); stop where the head runs out.
      const end = skipNested(head, head.slice(at).search(/\S/) + at);
      if (end < 0) break;
      at = end;
    }
    const next = /^\s*([,}])/.exec(head.slice(at));
    if (!next || next[1] === "}") break;
    at += next[0].length;
  }
  return members;
}

/** The index after the object or array starting at `start`, or -1 when `text` ends first. */
function skipNested(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

function scalarId(json: string | undefined): RpcId | undefined {
  if (json === undefined) return undefined;
  const value: unknown = JSON.parse(json);
  return typeof value === "string" || typeof value === "number" ? value : undefined;
}

/** Reads the id, method and kind of a dropped message from its first and last bytes. */
export function describeOversize(line: OversizeLine): OversizeMessage {
  const members = topLevelMembers(line.head.toString("utf8"));
  const tail = line.tail.toString("utf8");
  const tailId = TAIL_ID.exec(tail)?.[1];
  const tailMethod = TAIL_METHOD.exec(tail)?.[1];
  const id = scalarId(members.get("id")) ?? scalarId(tailId);
  const methodJson = members.get("method") ?? tailMethod;
  const method = methodJson === undefined ? undefined : (JSON.parse(methodJson) as unknown);
  const kind =
    typeof method === "string" || members.has("params")
      ? "request"
      : members.has("result") || members.has("error")
        ? "response"
        : "unknown";
  return {
    kind,
    ...(id !== undefined ? { id } : {}),
    ...(typeof method === "string" ? { method } : {}),
  };
}

const mb = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** The reason, for the error's message and stderr: sizes in bytes and MB. */
export function oversizeReason(line: OversizeLine): string {
  return `the message is ${line.bytes} bytes (${mb(line.bytes)}), over the limit of ${line.limit} bytes (${mb(line.limit)}); it was dropped unread`;
}

/** The line for stderr: what was dropped (as far as known) and why. */
export function oversizeLog(line: OversizeLine, message: OversizeMessage): string {
  const what =
    message.kind === "request"
      ? `request${message.method ? ` ${message.method}` : ""}${message.id !== undefined ? ` (id ${JSON.stringify(message.id)})` : " without a readable id"}`
      : message.kind === "response"
        ? `response${message.id !== undefined ? ` to request ${JSON.stringify(message.id)}` : ""}`
        : "message";
  return `dropped a ${what}: ${oversizeReason(line)}`;
}

/**
 * The error response for a dropped message, or undefined when none can be sent: for a request, the answer to send
 * back to the sender; for a response, the error to deliver locally in its place. Both need the id.
 */
export function oversizeError(
  line: OversizeLine,
  message: OversizeMessage,
):
  | { jsonrpc: "2.0"; id: RpcId; error: { code: number; message: string; data: { bytes: number; limit: number } } }
  | undefined {
  if (message.id === undefined || message.kind === "unknown") return undefined;
  const text =
    message.kind === "request"
      ? `Request too large: ${oversizeReason(line)}. Send less in one message.`
      : `Response too large: ${oversizeReason(line)}.`;
  return {
    jsonrpc: "2.0",
    id: message.id,
    error: { code: OVERSIZE_ERROR_CODE, message: text, data: { bytes: line.bytes, limit: line.limit } },
  };
}
