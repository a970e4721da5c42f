import type { ContentPart, ToolDefinition } from "./messages.js";

/** A tool call as handed to the executor (after the hooks' gate, with possibly rewritten args). */
export interface ToolCallRequest {
  /** The model's tool call id. */
  id: string;
  /** The name exactly as the model wrote it. */
  name: string;
  /** The offered tool it resolved to (`findTool`: `crow-mcp_terminal` → `terminal`). Route by this one. */
  tool: string;
  args: Record<string, unknown>;
}

/** Output of a running tool (MCP progress notifications, terminal output so far…). */
export interface ToolProgress {
  /** Human-readable progress text (e.g. new terminal output). */
  message?: string;
  progress?: number;
  total?: number;
  /** Anything the ACP layer wants to relay (terminal id, diff…). The loop passes it through untouched. */
  data?: unknown;
}

/**
 * A tool's answer. `content` becomes the `tool` message; `data` travels only in events (e.g. diff or terminal
 * content for the editor) and is never sent to the model.
 */
export interface ToolResult {
  content: string | ContentPart[];
  isError?: boolean;
  data?: unknown;
}

/** What the loop needs from a tool source (the tool router implements it). */
export interface ToolExecutor {
  /** Tools offered to the model on the next request (read once per LLM request). */
  definitions(): ToolDefinition[];
  /**
   * Runs one call. Should honour `signal` (the loop stops waiting on abort anyway) and may report progress.
   * A thrown error becomes an error tool result; tool failures should rather be `isError` results.
   */
  execute(
    call: ToolCallRequest,
    context: { signal: AbortSignal; onProgress: (progress: ToolProgress) => void },
  ): Promise<ToolResult>;
  /** The kind a tool declared (in-process tools may); undefined → derived from the name by {@link toolKind}. */
  kindOf?(name: string): ToolKind | undefined;
}

/** ACP tool kinds. */
export type ToolKind = "read" | "edit" | "delete" | "move" | "search" | "execute" | "think" | "fetch" | "other";

const KIND_WORDS: ReadonlyArray<[ToolKind, readonly string[]]> = [
  ["execute", ["terminal", "bash", "shell", "execute", "exec", "run", "command", "cmd", "sh"]],
  ["edit", ["write", "edit", "create", "replace", "patch", "update", "insert", "multiedit"]],
  ["delete", ["delete", "remove", "rm", "unlink"]],
  ["move", ["move", "rename", "mv"]],
  ["fetch", ["fetch", "download", "http", "curl", "browse"]],
  ["search", ["search", "grep", "find", "glob", "query", "lookup"]],
  ["read", ["read", "view", "cat", "open", "list", "ls", "get", "show"]],
  ["think", ["think", "plan", "todo", "todowrite"]],
];

/** Splits a tool name into lowercase words: `crow-mcp_terminal` → crow, mcp, terminal; `readFile` → read, file. */
function words(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/**
 * The ACP kind of a tool, derived from its name tolerantly (`crow-mcp_terminal` ≡ `terminal` → execute,
 * `web_search` → search, `read_file` → read). Words are tried from the last one backwards, so a server prefix
 * never decides, and whole words are compared, so `thread_x` is not a read.
 */
export function toolKind(name: string): ToolKind {
  const parts = words(name);
  for (let i = parts.length - 1; i >= 0; i--) {
    const word = parts[i] as string;
    for (const [kind, list] of KIND_WORDS) if (list.includes(word)) return kind;
  }
  return "other";
}

/** Whether a kind changes the workspace or runs code (the permission modes gate these). */
export function isMutatingKind(kind: ToolKind): boolean {
  return kind === "edit" || kind === "delete" || kind === "move" || kind === "execute";
}

const SEPARATORS = ["__", "_", ".", "/", ":", "-"];

/**
 * Finds the definition a model's tool name refers to: exact name first, then a server-prefixed form on either side
 * (`crow-mcp_terminal` ≡ `terminal`, `mcp__crow__read` ≡ `read`), then case-insensitively. Undefined when none or
 * when the tolerant match is ambiguous.
 */
export function findTool(definitions: readonly ToolDefinition[], name: string): ToolDefinition | undefined {
  const exact = definitions.find((d) => d.function.name === name);
  if (exact) return exact;
  const suffixOf = (long: string, short: string) =>
    long.length > short.length && long.endsWith(short) && SEPARATORS.some((s) => long.endsWith(s + short));
  const lower = name.toLowerCase();
  for (const compare of [
    (d: string) => suffixOf(name, d) || suffixOf(d, name),
    (d: string) => d.toLowerCase() === lower || suffixOf(lower, d.toLowerCase()) || suffixOf(d.toLowerCase(), lower),
  ]) {
    const hits = definitions.filter((d) => compare(d.function.name));
    if (hits.length === 1) return hits[0];
    if (hits.length > 1) return undefined;
  }
  return undefined;
}
