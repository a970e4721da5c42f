/** The editor as the tools see it: its fs and terminal, as the ACP layer offers them (see acp/client-bridge.ts). */
/** `{name, value}` pairs, as ACP sends environment variables and HTTP headers. */
export interface NameValue {
  name: string;
  value: string;
}

/** A terminal the editor runs (structurally the ACP SDK's `TerminalHandle`). */
export interface ClientTerminal {
  /** The ACP terminal id, to embed as `{type:"terminal", terminalId}` in the tool call. */
  readonly id: string;
  /** Output so far; `exitStatus` once the command has ended. */
  currentOutput(): Promise<{
    output: string;
    truncated: boolean;
    exitStatus?: { exitCode?: number | null; signal?: string | null } | null;
  }>;
  waitForExit(): Promise<{ exitCode?: number | null; signal?: string | null }>;
  /** Kills the command; the terminal stays valid (output can still be read). */
  kill(): Promise<unknown>;
  /** Frees the terminal (kills the command if still running). Always called once the tool call is over. */
  release(): Promise<unknown>;
}

/** Parameters of `terminal/create` without the session id (the bridge adds it). */
export interface CreateTerminalParams {
  command: string;
  args?: string[];
  env?: NameValue[];
  cwd?: string;
  outputByteLimit?: number;
}

/**
 * What the ACP layer offers of the editor, one method per capability the client advertised (leave a method out when
 * the capability is absent). Implemented over `AgentContext` (`fs/read_text_file`, `fs/write_text_file`,
 * `createTerminal`) with the session id filled in. Errors thrown by these methods are reported to the model.
 */
export interface ClientBridge {
  /** `fs/read_text_file`: the editor's view of the file, unsaved changes included. `line` is 1-based. */
  readTextFile?(path: string, line?: number, limit?: number): Promise<string>;
  /** `fs/write_text_file`: writes through the editor (it shows and tracks the change). */
  writeTextFile?(path: string, content: string): Promise<void>;
  /** `terminal/create`: runs a command in a terminal the editor shows. */
  createTerminal?(params: CreateTerminalParams): Promise<ClientTerminal>;
}
