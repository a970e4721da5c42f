/**
 * The built-in crow-mcp shared by every session of this agent process: one Node process serving MCP on a unix socket in
 * a private temp directory (`crow-mcp --socket`: one JSON-RPC message per line, one connection per MCP session), each
 * session with its own shell, working directory (`_meta["crow/cwd"]` of its `initialize`) and web cache.
 *
 * Why a unix socket: only this user can enter the directory (mkdtemp makes it 0700) and the socket is 0600, so no
 * other user can connect, nothing listens on the network, and no port can be taken by someone else. The sandboxed
 * shells run as this user, though: crow-mcp hides the socket's directory from every sandbox, and each launch gets a
 * random secret, written to crow-mcp's stdin (`--secret-stdin`, never in its arguments or environment), that every
 * connection's `initialize` must carry — a shell that reached the socket anyway cannot open a session of its own.
 *
 * Lifecycle: started early (`crow acp` launches it before the ACP layer loads, so the first session's toolserver has
 * booted by the time it is asked for), restarted on demand after it died (the next session or call that needs it),
 * and tied to this process by its stdin (`--exit-with-stdin`): when the agent exits, even by SIGKILL, the pipe closes
 * and crow-mcp stops its shells and exits. A crow command that ends normally stops it and waits until it has ended
 * (entry/command.ts), so nothing it started outlives it. Its stdio handles are unref'd while no session uses it, so
 * a library user whose sessions are closed can exit.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { log } from "../base/log.js";
import { toolserverEnvironment } from "./child-env.js";
import { builtinServerPath } from "./servers.js";

/** Node flags of the shared crow-mcp: one V8 background thread (~3.4 MB less resident; it mostly waits on I/O). */
const TOOLSERVER_NODE_FLAGS: readonly string[] = ["--v8-pool-size=1"];

/** How long crow-mcp may take to start listening. */
const START_TIMEOUT_MS = 30_000;
const STDERR_TAIL_CHARS = 2000;
/** Node flags: one V8 background thread instead of four (a toolserver waits on I/O; saves ~5 MB). */
const READY = /listening on unix:/;

/** One running shared crow-mcp process. */
export interface SharedEndpoint {
  readonly pid: number;
  /** The unix socket it serves MCP on (one JSON-RPC message per line, one session per connection). */
  readonly socketPath: string;
  /** The secret each connection's `initialize` must carry (`_meta["crow/secret"]`). */
  readonly secret: string;
  /** Resolves, with a sentence saying how, when this process has ended. */
  readonly ended: Promise<string>;
}

interface Running {
  child: ChildProcess;
  ready: Promise<SharedEndpoint>;
  /** Resolves when the process has ended. */
  ended: Promise<string>;
  /** The environment it was started with. */
  env: Record<string, string>;
}

let socketDir: string | undefined;
let generation = 0;
let running: Running | undefined;
/** Sessions (connections) currently using the shared process; while 0 it does not keep this process alive. */
let users = 0;

function privateSocketPath(): string {
  if (!socketDir) {
    socketDir = mkdtempSync(path.join(tmpdir(), "crow-mcp-"));
    const dir = socketDir;
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  }
  return path.join(socketDir, `mcp-${++generation}.sock`);
}

function setRef(child: ChildProcess, ref: boolean): void {
  for (const handle of [child, child.stdin, child.stdout, child.stderr] as Array<{
    ref?: () => void;
    unref?: () => void;
  } | null>) {
    if (ref) handle?.ref?.();
    else handle?.unref?.();
  }
}

function describeExit(pid: number, code: number | null, signal: NodeJS.Signals | null, stderr: string): string {
  const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
  const tail = stderr.trim();
  return `the shared crow-mcp (pid ${pid}) ${how}${tail ? `; its stderr:\n${tail}` : ""}`;
}

function launch(env: Record<string, string> = toolserverEnvironment()): Running {
  const socketPath = privateSocketPath();
  const secret = randomBytes(32).toString("base64url");
  const child = spawn(
    process.execPath,
    [...TOOLSERVER_NODE_FLAGS, builtinServerPath(), "--socket", socketPath, "--exit-with-stdin", "--secret-stdin"],
    // Its own process group: a Ctrl-C at the terminal of `crow run` (which hosts the agent) must reach only crow run,
    // which turns it into session/cancel; the toolserver and its shells are not the terminal's foreground job.
    { cwd: process.cwd(), env, stdio: ["pipe", "ignore", "pipe"], detached: true },
  );
  let stderr = "";
  let listening = false;
  const ended = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      if (running?.child === child) running = undefined;
      resolve(describeExit(child.pid ?? 0, code, signal, stderr));
    });
    child.once("error", (error) => {
      if (running?.child === child) running = undefined;
      resolve(`the shared crow-mcp could not start: ${error.message}`);
    });
  });
  const ready = new Promise<SharedEndpoint>((resolve, reject) => {
    const timer = setTimeout(() => {
      reject(new Error(`crow-mcp did not start listening within ${START_TIMEOUT_MS / 1000} s`));
      child.kill("SIGKILL");
    }, START_TIMEOUT_MS);
    timer.unref();
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (text: string) => {
      stderr = (stderr + text).slice(-STDERR_TAIL_CHARS);
      if (listening || !READY.test(stderr)) return;
      listening = true;
      // The tail shown if it dies later holds what it said after it started.
      stderr = "";
      clearTimeout(timer);
      // Starting kept this process alive (someone waits for it); from now on only sessions using it do.
      setRef(child, users > 0);
      resolve({ pid: child.pid ?? 0, socketPath, secret, ended });
    });
    void ended.then((why) => {
      clearTimeout(timer);
      reject(new Error(why));
    });
  });
  ready.catch(() => {});
  // Writes to a dead child's stdin fail with EPIPE; the exit is reported through `ended`.
  child.stdin?.on("error", () => {});
  child.stdin?.write(`${secret}\n`);
  return { child, ready, ended, env };
}

function sameEnvironment(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}

/**
 * Starts the shared crow-mcp now unless it is running or starting with environment `env` (default: this process's
 * under the configuration's policy, see child-env.ts). One the head start launched before the configuration was
 * loaded, with another environment (config.yaml's `child_env.allow`, say), is replaced while no session uses it yet.
 * Never throws.
 */
export function startSharedToolserver(env: Record<string, string> = toolserverEnvironment()): void {
  if (running) {
    if (users > 0 || sameEnvironment(running.env, env)) return;
    log.debug("the configuration changes the shared crow-mcp's environment: starting it again");
    void stopSharedToolserver();
  }
  try {
    running = launch(env);
  } catch {
    // The built-in cannot be resolved: the first session reports why, as it does for any server that cannot start.
  }
}

/** The running shared crow-mcp, started (again) if needed. Rejects with what went wrong when it cannot start. */
export function sharedEndpoint(): Promise<SharedEndpoint> {
  running ??= launch();
  return running.ready;
}

/** Counts a session in (true) or out (false): the process keeps the agent alive only while a session uses it. */
export function holdSharedToolserver(hold: boolean): void {
  users = Math.max(0, users + (hold ? 1 : -1));
  if (running) setRef(running.child, users > 0);
}

/** How long {@link stopSharedToolserver} waits for crow-mcp to end before killing it. */
const STOP_GRACE_MS = 3000;

/**
 * Stops the shared crow-mcp now (SIGTERM: it closes its sessions and their shells), if it runs. Resolves when it has
 * ended (SIGKILL after {@link STOP_GRACE_MS}), so a process that awaits this before exiting leaves nothing running:
 * crow-mcp writes its compile cache and removes its files as it exits, and an editor (or a test) that removes the
 * home directory once `crow acp` is gone must not race it.
 */
export async function stopSharedToolserver(): Promise<void> {
  const stopping = running;
  running = undefined;
  if (!stopping) return;
  const { child, ended } = stopping;
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), STOP_GRACE_MS);
  });
  if ((await Promise.race([ended, late])) === "late") {
    child.kill("SIGKILL");
    await ended;
  }
  clearTimeout(timer);
}

/** Process id of the shared crow-mcp while it runs (tests, monitoring). */
export function sharedToolserverPid(): number | undefined {
  return running?.child.pid;
}
