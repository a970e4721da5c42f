/**
 * A spare built-in crow-mcp, started when `crow acp` starts so the first session's toolserver has already booted by
 * the time the runtime asks for it (Node startup + crow-mcp's imports are most of a session's readiness). The spare
 * runs in the agent's own cwd with the agent's environment (after `.env` was exported): exactly what the router would
 * spawn for a session in that directory. The first session whose built-in spec matches adopts it; any other session
 * (different cwd or environment) discards it, and so does a timer and the agent's exit. Only the process is started
 * early: the MCP handshake still happens on adoption, through the session's own client.
 *
 * This module stays light (no MCP SDK): the CLI loads it before the heavy imports.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { builtinSpec, type ServerSpec } from "./servers.js";

/** How long an unadopted spare may wait for its session before it is stopped. */
const SPARE_TTL_MS = 60_000;

type StdioSpec = Extract<ServerSpec, { transport: "stdio" }>;

/** A running server process handed to its connection: the process and its stderr from the first byte. */
export interface AdoptedProcess {
  child: ChildProcess;
  /** The child's stderr, buffered since spawn (nothing it wrote before adoption is lost). */
  stderr: PassThrough;
}

interface Spare extends AdoptedProcess {
  spec: StdioSpec;
  timer: NodeJS.Timeout;
}

let spare: Spare | undefined;

function sameSpec(a: StdioSpec, b: ServerSpec): boolean {
  if (b.transport !== "stdio" || a.command !== b.command || a.cwd !== b.cwd) return false;
  if (a.args.length !== b.args.length || a.args.some((arg, i) => arg !== b.args[i])) return false;
  const keys = Object.keys(a.env);
  return keys.length === Object.keys(b.env).length && keys.every((key) => a.env[key] === b.env[key]);
}

function stop(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
}

const stopOnExit = () => discardSpare();

/**
 * Starts the spare built-in crow-mcp in `cwd` (default: the process cwd), unless one is already waiting or the
 * built-in cannot be resolved (then the session reports the problem as it does today). Never throws.
 */
export function startSpareBuiltin(cwd: string = process.cwd()): void {
  if (spare) return;
  const spec = builtinSpec(cwd);
  if (spec.transport !== "stdio") return;
  let child: ChildProcess;
  try {
    child = spawn(spec.command, spec.args, { cwd: spec.cwd, env: spec.env, stdio: ["pipe", "pipe", "pipe"] });
  } catch {
    return;
  }
  const stderr = new PassThrough();
  child.stderr?.pipe(stderr);
  // A failed spawn or an early exit just means no spare: the session spawns its own as usual.
  child.on("error", () => {
    if (spare?.child === child) discardSpare();
  });
  child.once("exit", () => {
    if (spare?.child === child) discardSpare();
  });
  const timer = setTimeout(() => discardSpare(), SPARE_TTL_MS);
  timer.unref();
  spare = { spec, child, stderr, timer };
  process.once("exit", stopOnExit);
}

/**
 * Hands over the spare when `spec` is what it was started as (same command, args, cwd and environment) and it is
 * still running; otherwise stops it (it would never match a later session either) and returns undefined.
 */
export function adoptSpare(spec: ServerSpec): AdoptedProcess | undefined {
  const current = spare;
  if (!current) return undefined;
  const alive = current.child.exitCode === null && current.child.signalCode === null && current.child.pid !== undefined;
  if (!alive || !sameSpec(current.spec, spec)) {
    discardSpare();
    return undefined;
  }
  clearTimeout(current.timer);
  process.removeListener("exit", stopOnExit);
  spare = undefined;
  return { child: current.child, stderr: current.stderr };
}

/** Stops the spare, if one is waiting. */
export function discardSpare(): void {
  const current = spare;
  if (!current) return;
  spare = undefined;
  clearTimeout(current.timer);
  process.removeListener("exit", stopOnExit);
  stop(current.child);
}

/** Process id of the waiting spare (tests). */
export function sparePid(): number | undefined {
  return spare?.child.pid;
}
