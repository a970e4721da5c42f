import type { ContentPart, ToolDefinition } from "./messages.js";
import type { ToolDisplay, ToolLocation } from "./tool-display.js";

export type { ToolDiagnostic, ToolDiagnostics, ToolDiff, ToolDisplay, ToolLocation } from "./tool-display.js";

/** A tool call as handed to its tool's `run` (after the hooks' gate, with possibly rewritten args). */
export interface ToolCallRequest {
  /** The model's tool call id. */
  id: string;
  /** The name exactly as the model wrote it. */
  name: string;
  /** The name of the offered tool it resolved to ({@link ToolSet.resolve}: `crow-mcp_terminal` → `terminal`). */
  tool: string;
  args: Record<string, unknown>;
}

/** Output of a running tool (MCP progress notifications, terminal output so far…). */
export interface ToolProgress {
  /** Human-readable progress text (e.g. new terminal output). */
  message?: string;
  progress?: number;
  total?: number;
  /** What the host should show now (a live terminal, locations). The loop passes it through untouched. */
  display?: ToolDisplay;
}

/**
 * A tool's answer. `content` becomes the `tool` message; `display` travels only in events (the diff, the terminal)
 * and is never sent to the model.
 */
export interface ToolResult {
  content: string | ContentPart[];
  isError?: boolean;
  display?: ToolDisplay;
}

/** What a running call may use: cancellation and progress reports. */
export interface ToolRunContext {
  signal: AbortSignal;
  onProgress: (progress: ToolProgress) => void;
}

/**
 * One tool of a {@link ToolSet}, as a call's name resolved to it ({@link ToolSet.resolve}). The loop resolves each
 * call once and carries this to the gates and to execution: nothing looks the name up again.
 */
export interface ResolvedTool {
  /** The offered definition (its name is the canonical one: `crow-mcp_read` → `read`). */
  definition: ToolDefinition;
  /** The declared kind, else derived from the name by {@link toolKind}. */
  kind: ToolKind;
  /** The tool's own read-only claim (MCP `readOnlyHint`, an in-process tool's `readOnly`): the permission modes use it. */
  readOnly?: boolean;
  /**
   * True while the operating system confines this tool's effects to what the session's mode allows (the sandboxed
   * terminal): read-only mode then lets it run. Read when a call is gated (the mode can change).
   */
  confined?(): boolean;
  /** What a host shows of a call with these arguments before it runs (title, locations). */
  display(args: Record<string, unknown>): ToolDisplay;
  /**
   * What the call would change, without changing anything (a write's or edit's diff, computed where the file is),
   * for a permission question. Undefined when the tool cannot tell; rejects with the tool's own message when the
   * call would fail.
   */
  propose?(args: Record<string, unknown>, signal: AbortSignal): Promise<ToolDisplay | undefined>;
  /**
   * Runs one call. Should honour `signal` (the loop stops waiting on abort anyway) and may report progress.
   * A thrown error becomes an error tool result; tool failures should rather be `isError` results.
   */
  run(call: ToolCallRequest, context: ToolRunContext): Promise<ToolResult>;
}

/**
 * A set of tools the loop can offer and run: a session's tools (extension tools plus the session's external set),
 * the agent's MCP/editor router, or any SDK user's own.
 */
export interface ToolSet {
  /** Tools offered to the model on the next request (read once per LLM request). */
  definitions(): ToolDefinition[];
  /**
   * The tool a model's name refers to (exact name first, then tolerantly as {@link findTool} does), or undefined
   * for an unknown name.
   */
  resolve(name: string): ResolvedTool | undefined;
  /**
   * Whether the tool of this offered name may wait until the model loads it (another MCP server's tool; never one of
   * Crow's own). The session defers such tools when there are many of them (`extensions/deferred-tools.ts`).
   * Absent: none may wait.
   */
  deferrable?(name: string): boolean;
  /** Problems worth telling the user (e.g. an MCP server that failed to start); the set works without them. */
  failures?(): string[];
  /** Stops what the set runs (MCP servers, terminals). Called once when the session closes. */
  close?(): Promise<void>;
  /**
   * Skills its servers serve (MCP servers declaring the skills extension), joined to the session's local skills.
   * Bounded in time by the set; never rejects (failures are `problems`).
   */
  skills?(signal?: AbortSignal): Promise<ExternalSkills>;
}

/**
 * A {@link ToolSet} over fixed definitions and one function that runs any of them: names resolve with
 * {@link findTool}, kinds come from the names, displays from {@link callDisplay}. For SDK hosts with simple tools
 * of their own (and tests); `run` gets the canonical name as `call.tool`.
 */
export function toolSetOf(
  definitions: () => ToolDefinition[],
  run: (call: ToolCallRequest, context: ToolRunContext) => Promise<ToolResult>,
): ToolSet {
  return {
    definitions,
    resolve(name) {
      const definition = findTool(definitions(), name);
      if (!definition) return undefined;
      const canonical = definition.function.name;
      return {
        definition,
        kind: toolKind(canonical),
        display: (args) => callDisplay(canonical, args),
        run: (call, context) => run({ ...call, tool: canonical }, context),
      };
    },
  };
}

/**
 * Runs a call on `tools`: resolves its name, then runs it; an unknown name is an error result listing the tools.
 * For callers that hold no resolution of their own (the loop resolves once and calls `run` itself).
 */
export async function runToolCall(
  tools: ToolSet,
  call: Omit<ToolCallRequest, "tool"> & { tool?: string },
  context: ToolRunContext,
): Promise<ToolResult> {
  const resolved = tools.resolve(call.tool ?? call.name);
  if (!resolved) {
    const names =
      tools
        .definitions()
        .map((d) => d.function.name)
        .join(", ") || "none";
    return { content: `Error: unknown tool "${call.name}". Available tools: ${names}.`, isError: true };
  }
  return resolved.run({ ...call, tool: resolved.definition.function.name }, context);
}

/**
 * The generic display of a call, known from its name and arguments alone: a title, and the file of a tool named like
 * read/write/edit (at the read's `offset` line when there is one). Tool sets use it unless they know better (the
 * agent's profiles of crow-mcp's tools, an extension tool's own `display`).
 */
export function callDisplay(tool: string, args: Record<string, unknown>): ToolDisplay {
  const display: ToolDisplay = { title: callTitle(tool, args) };
  const locations = callLocations(tool, args);
  if (locations.length > 0) display.locations = locations;
  return display;
}

/** The `file_path` (or `path`) argument of a file tool call, when it is an absolute path. */
export function filePathArg(args: Record<string, unknown>): string | undefined {
  const value = args.file_path ?? args.path;
  return typeof value === "string" && value.startsWith("/") ? value : undefined;
}

/** Locations of a read/write/edit call from its arguments: the file, at the read's `offset` line. Empty otherwise. */
export function callLocations(tool: string, args: Record<string, unknown>): ToolLocation[] {
  const base = tool.slice(tool.lastIndexOf("_") + 1);
  if (base !== "read" && base !== "write" && base !== "edit") return [];
  const file = filePathArg(args);
  if (!file) return [];
  const offset = args.offset;
  if (base === "read" && typeof offset === "number" && Number.isInteger(offset) && offset > 1) {
    return [{ path: file, line: offset }];
  }
  return [{ path: file }];
}

/** A short title for a tool call as editors show it: `read: /a/b.ts`, `terminal: npm test`, otherwise the tool name. */
export function callTitle(tool: string, args: Record<string, unknown>): string {
  const file = filePathArg(args);
  if (file) return `${tool}: ${file}`;
  for (const key of ["command", "query", "url", "question"]) {
    const value = args[key];
    if (typeof value === "string" && value.trim() !== "") {
      const line = value.trim().split("\n")[0] ?? "";
      return `${tool}: ${line.length > 80 ? `${line.slice(0, 79)}…` : line}`;
    }
  }
  return tool;
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

/**
 * A skill served from outside the session's folders (an MCP server declaring the skills extension): listed with its
 * frontmatter, its SKILL.md read only when the model asks for it. It is as trusted as whoever configured its origin.
 */
export interface ExternalSkill {
  /** Unique among the session's skills; the provider namespaces it by origin (`docs:release-notes`). */
  name: string;
  description: string;
  /** Where it is served from, e.g. `mcp:docs` (shown as the skill's root). */
  origin: string;
  /** The address of its SKILL.md, e.g. `skill://release-notes/SKILL.md`. */
  uri: string;
  /** SHA-256 (hex) of SKILL.md as published: the content is cached under it. */
  digest?: string;
  /** Its other files, relative to the skill root. */
  files?: string[];
  /** The whole SKILL.md; rejects with a message saying what went wrong. */
  load(signal?: AbortSignal): Promise<string>;
}

/** What a provider of external skills found: the skills, and one line per origin that failed. */
export interface ExternalSkills {
  skills: ExternalSkill[];
  problems: string[];
}
