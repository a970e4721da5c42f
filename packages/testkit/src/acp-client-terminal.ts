/**
 * The terminals of the ACP test client: `terminal/create` runs a real process (through bash when no args are given),
 * its output is kept up to the requested byte limit, and kill/release end its whole process group.
 */
import { type ChildProcess, spawn } from "node:child_process";
import type {
  CreateTerminalRequest,
  CreateTerminalResponse,
  KillTerminalRequest,
  ReleaseTerminalRequest,
  TerminalOutputRequest,
  TerminalOutputResponse,
  WaitForTerminalExitRequest,
  WaitForTerminalExitResponse,
} from "@agentclientprotocol/sdk";

interface TestTerminal {
  child: ChildProcess;
  output: string;
  exit?: { exitCode: number | null; signal: string | null };
  exited: Promise<void>;
}

export class TestTerminals {
  /** Each created command line, in order. */
  readonly calls: string[] = [];
  /** The ids released, in order. */
  readonly released: string[] = [];
  private readonly terminals = new Map<string, TestTerminal>();
  private counter = 0;

  create(params: CreateTerminalRequest): CreateTerminalResponse {
    const terminalId = `term-${++this.counter}`;
    const args = params.args ?? [];
    this.calls.push([params.command, ...args].join(" "));
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
    for (const { name, value } of params.env ?? []) env[name] = value;
    const proc =
      args.length > 0
        ? spawn(params.command, args, { cwd: params.cwd ?? undefined, env, detached: true })
        : spawn(params.command, { cwd: params.cwd ?? undefined, env, shell: "/bin/bash", detached: true });
    const entry: TestTerminal = { child: proc, output: "", exited: Promise.resolve() };
    const limit = params.outputByteLimit ?? 1_000_000;
    const append = (chunk: Buffer) => {
      entry.output = (entry.output + chunk.toString("utf8")).slice(-limit);
    };
    proc.stdout?.on("data", append);
    proc.stderr?.on("data", append);
    entry.exited = new Promise((resolve) => {
      proc.once("close", (exitCode, signal) => {
        entry.exit = { exitCode, signal };
        resolve();
      });
      proc.once("error", (error) => {
        entry.output += String(error);
        entry.exit = { exitCode: 127, signal: null };
        resolve();
      });
    });
    this.terminals.set(terminalId, entry);
    return { terminalId };
  }

  output(params: TerminalOutputRequest): TerminalOutputResponse {
    const t = this.get(params.terminalId);
    return { output: t.output, truncated: false, ...(t.exit ? { exitStatus: t.exit } : {}) };
  }

  async waitForExit(params: WaitForTerminalExitRequest): Promise<WaitForTerminalExitResponse> {
    const t = this.get(params.terminalId);
    await t.exited;
    return t.exit ?? {};
  }

  kill(params: KillTerminalRequest): Record<string, never> {
    killTree(this.get(params.terminalId));
    return {};
  }

  release(params: ReleaseTerminalRequest): Record<string, never> {
    const t = this.get(params.terminalId);
    if (!t.exit) killTree(t);
    this.terminals.delete(params.terminalId);
    this.released.push(params.terminalId);
    return {};
  }

  /** Kills every terminal still running (the client is closing). */
  killAll(): void {
    for (const t of this.terminals.values()) if (!t.exit) killTree(t);
  }

  private get(id: string): TestTerminal {
    const found = this.terminals.get(id);
    if (!found) throw new Error(`unknown terminal ${id}`);
    return found;
  }
}

function killTree(t: TestTerminal): void {
  if (t.child.pid === undefined) return;
  try {
    process.kill(-t.child.pid, "SIGKILL");
  } catch {
    t.child.kill("SIGKILL");
  }
}
