import { spawn } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { runToolCall, type ToolDisplay, type ToolProgress, type ToolResult } from "@crow/core";
import { displayContent } from "../../src/acp/translate.js";
import type { ClientBridge, ClientTerminal, CreateTerminalParams, ToolRouter } from "../../src/tools/index.js";

/** Calls a tool the way the loop does: the model's name resolved by the router once, progress collected. */
export async function run(
  router: ToolRouter,
  name: string,
  args: Record<string, unknown>,
  options: { signal?: AbortSignal; onProgress?: (p: ToolProgress) => void } = {},
): Promise<ToolResult & { text: string; progress: ToolProgress[] }> {
  const progress: ToolProgress[] = [];
  const result = await runToolCall(
    router,
    { id: `call-${Math.random().toString(36).slice(2)}`, name, args },
    {
      signal: options.signal ?? new AbortController().signal,
      onProgress: (p) => {
        progress.push(p);
        options.onProgress?.(p);
      },
    },
  );
  return { ...result, text: textOf(result), progress };
}

/**
 * A call's display in the shape the ACP layer sends it: `content` (diff, editor terminal) as ACP tool-call content,
 * plus the locations, the terminal id and where it ran.
 */
export function toolCallData(display: ToolDisplay | undefined) {
  if (!display) return undefined;
  const content = displayContent(display);
  return {
    ...(content.length > 0 ? { content } : {}),
    ...(display.locations ? { locations: display.locations } : {}),
    ...(display.terminalId !== undefined ? { terminalId: display.terminalId } : {}),
    ...(display.via !== undefined ? { via: display.via } : {}),
  };
}

export function textOf(result: ToolResult): string {
  if (typeof result.content === "string") return result.content;
  return result.content.map((p) => (p.type === "text" ? p.text : `[${p.type}]`)).join("\n");
}

/** Resolves when `check` holds (polling), or rejects after `ms`. For waiting on real processes, not for timing. */
export async function until(check: () => boolean | Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not reached in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** What the fake editor saw. */
export interface EditorLog {
  reads: string[];
  writes: Array<{ path: string; content: string }>;
  terminals: Array<{ params: CreateTerminalParams; id: string; released: boolean; killed: boolean }>;
}

/**
 * A stand-in for the EDITOR side of ACP (the product code under test is real): an in-memory buffer overlay over the
 * disk for fs, and terminals that really run their command with child_process (output collected, exit awaited).
 */
export function fakeEditor(buffers: Map<string, string> = new Map()): {
  bridge: Required<ClientBridge>;
  log: EditorLog;
} {
  const log: EditorLog = { reads: [], writes: [], terminals: [] };
  let next = 0;
  const bridge: Required<ClientBridge> = {
    readTextFile: async (path) => {
      log.reads.push(path);
      const buffered = buffers.get(path);
      if (buffered !== undefined) return buffered;
      return readFile(path, "utf8"); // rejects for missing files, like an editor's "not found"
    },
    writeTextFile: async (path, content) => {
      log.writes.push({ path, content });
      buffers.set(path, content);
    },
    createTerminal: async (params) => {
      const id = `term-${++next}`;
      const record = { params, id, released: false, killed: false };
      log.terminals.push(record);
      const env = { ...process.env };
      for (const { name, value } of params.env ?? []) env[name] = value;
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env, detached: true });
      let output = "";
      const limit = params.outputByteLimit ?? Number.POSITIVE_INFINITY;
      let truncated = false;
      const append = (chunk: Buffer) => {
        output += chunk.toString();
        if (output.length > limit) {
          output = output.slice(-limit);
          truncated = true;
        }
      };
      child.stdout.on("data", append);
      child.stderr.on("data", append);
      const exited = new Promise<{ exitCode: number | null; signal: string | null }>((resolve) =>
        child.once("close", (code, signal) => resolve({ exitCode: code, signal })),
      );
      let status: { exitCode: number | null; signal: string | null } | undefined;
      void exited.then((s) => {
        status = s;
      });
      const kill = () => {
        record.killed = true;
        try {
          if (child.pid) process.kill(-child.pid, "SIGKILL");
        } catch {
          // already gone
        }
      };
      const terminal: ClientTerminal = {
        id,
        currentOutput: async () => ({ output, truncated, ...(status ? { exitStatus: status } : {}) }),
        waitForExit: () => exited,
        kill: async () => {
          kill();
          await exited;
          return {};
        },
        release: async () => {
          record.released = true;
          if (!status) kill();
          return {};
        },
      };
      return terminal;
    },
  };
  return { bridge, log };
}

/** Writes a file and returns its path (small convenience for the tests). */
export async function put(file: string, content: string): Promise<string> {
  await writeFile(file, content);
  return file;
}
