/** What a host shows of a tool call: plain data, imported by the tool contracts and by the stored outcome of a call. */

/** A file location an editor can follow (`line` is 1-based). */
export interface ToolLocation {
  path: string;
  line?: number;
}

/** A change to one file: `oldText` null for a new file. */
export interface ToolDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/** One diagnostic a language server reported (`line` and `column` 1-based). */
export interface ToolDiagnostic {
  path: string;
  line: number;
  column: number;
  severity: "error" | "warning" | "information" | "hint";
  code?: string;
  message: string;
}

/**
 * What a change did to a language server's diagnostics: the errors and warnings it introduced (`added`, capped;
 * `total` before the cap), or that it fixed every error there was (`fixed`, a count).
 */
export interface ToolDiagnostics {
  language: string;
  added: ToolDiagnostic[];
  total: number;
  fixed: number;
}

/**
 * What a host shows of a tool call besides the model's text, computed once by the tool set that knows it (the
 * agent's router: the file a write changes, the diff its server returned, the editor terminal running the command)
 * and carried unchanged on events; never sent to the model. Hosts only translate it (ACP tool-call fields).
 */
export interface ToolDisplay {
  /** A short title: `read: /a/b.ts`, `terminal: npm test`, else the tool name. */
  title?: string;
  /** Files the call reads or changes. */
  locations?: ToolLocation[];
  /** The change a write or edit made (on results) or would make (on a permission question). */
  diff?: ToolDiff;
  /** The diagnostics a write or edit introduced or fixed (crow-mcp's language servers), shown under the diff. */
  diagnostics?: ToolDiagnostics;
  /** Id of the editor terminal running (or that ran) the command. */
  terminalId?: string;
  /** Where the call ran: an MCP server's name, or `client` for the editor's fs/terminal. */
  via?: string;
  /** The child session a `task` call runs (and, on its result, how that session's turn ended). */
  subagent?: { sessionId: string; stopReason?: string };
}
