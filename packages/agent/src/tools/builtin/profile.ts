/**
 * What Crow knows about one tool beyond its MCP definition: its ACP kind, what a host shows of a call and of its
 * result, the change a call makes to a file, and how it runs through the editor. Each of crow-mcp's tools has its
 * profile in a file of this folder, registered in index.ts; any other tool gets the generic profile (kind and title
 * from its name and arguments).
 */
import {
  callDisplay,
  type ToolDiff,
  type ToolDisplay,
  type ToolKind,
  type ToolLocation,
  type ToolResult,
  type ToolRunContext,
} from "@crow/core";
import { callTitle, filePathArg, toolKind } from "@crow/core/internal";
import type { SandboxPolicy } from "@crow/mcp/sandbox";
import type { ClientBridge } from "../client-types.js";

export interface ToolProfile {
  /** The ACP kind of its calls. */
  kind: ToolKind;
  /** What a host shows of a call before it runs (`name`: the tool's name as offered): a title, the files it touches. */
  display(name: string, args: Record<string, unknown>): ToolDisplay;
  /**
   * What its server's answer adds to the display (`meta`: the result's `_meta`; `failed`: an error result), e.g. the
   * diff a write made. Default: nothing.
   */
  resultDisplay?(args: Record<string, unknown>, meta: unknown, failed: boolean): ToolDisplay;
  /** Present for tools that change one file: offered a dry-run proposal, checked against the sandbox's roots. */
  change?: FileChangeProfile;
  /** How it runs through the editor (built-in crow-mcp tools only; the editor advertised the capability). */
  editor?: EditorRoute;
  /** Its calls run in crow-mcp's confined shell while the sandbox is on (the terminal). */
  sandboxed?: boolean;
}

/** A tool that changes one file (write, edit). */
export interface FileChangeProfile {
  /** Why the sandbox `policy` refuses the call on `file` through the editor, if it does. */
  refusal(file: string, policy: SandboxPolicy): string | undefined;
  /**
   * The change its arguments describe (a path relative to `cwd` resolved), for a history stored without the diff the
   * session showed. Undefined for odd arguments.
   */
  fromArgs(args: Record<string, unknown>, cwd: string): ArgsDiff | undefined;
}

/** A change as a call's arguments tell it: `oldText` absent when they do not say (a write's previous text). */
export type ArgsDiff = Omit<ToolDiff, "oldText"> & { oldText?: string | null };

/** A call the editor could run: its arguments and what the router knows now. */
export interface EditorCall {
  client: ClientBridge;
  args: Record<string, unknown>;
  /** The session's sandbox policy now (undefined: none configured). */
  policy: SandboxPolicy | undefined;
  /** Whether the sandbox is on: commands then run confined, and writes go through crow-mcp, not the editor. */
  sandboxOn: boolean;
}

/** A call the editor runs. */
export interface EditorRun extends EditorCall {
  cwd: string;
  context: ToolRunContext;
  /** How long a command may run when the call gives no `timeout`. */
  terminalTimeoutSeconds: number;
  /** Runs the call on crow-mcp instead (what the editor's buffer cannot take). */
  onServer(): Promise<ToolResult>;
}

/** How a built-in tool runs through the editor's fs or terminal. */
export interface EditorRoute {
  /** Runs the call in the editor; undefined (or resolving undefined) when crow-mcp should run it. */
  run(call: EditorRun): Promise<ToolResult | undefined> | undefined;
  /** What the call would change in the editor's buffer (a permission question); undefined when crow-mcp would run it. */
  propose?(call: EditorCall): Promise<ToolDiff | undefined> | undefined;
}

/** The profile of a tool Crow knows nothing special about (other MCP servers' tools, extension tools). */
export function genericProfile(name: string): ToolProfile {
  return { kind: toolKind(name), display: callDisplay };
}

/** A file call's location: its absolute `file_path` (or `path`) argument, at `line` when given; else none. */
export function fileLocations(args: Record<string, unknown>, line?: number): ToolLocation[] {
  const file = filePathArg(args);
  if (!file) return [];
  return [line === undefined ? { path: file } : { path: file, line }];
}

/** A display's `locations` field: `{locations}` when there are some, else nothing. */
export function located(locations: ToolLocation[]): Pick<ToolDisplay, "locations"> {
  return locations.length > 0 ? { locations } : {};
}

/** The display of a built-in call before it runs: the usual title (`read: /a/b.ts`, `terminal: npm test`) and `locations`. */
export function titled(name: string, args: Record<string, unknown>, locations: ToolLocation[] = []): ToolDisplay {
  return { title: callTitle(name, args), ...located(locations) };
}
