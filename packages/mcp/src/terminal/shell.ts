import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { IPty } from "@lydell/node-pty";
import { childEnvironment } from "../child-env.js";
import { errorText } from "../error-text.js";
import { log } from "../log.js";
import { bwrapArgs, inside, sandboxAvailability, writableRoots } from "../sandbox/bwrap.js";
import { mountNamespace, plantGuards, removePlanted } from "../sandbox/later.js";
import { type SandboxPolicy, UNCONFINED } from "../sandbox/policy.js";
import { trustedExecutable } from "../sandbox/which.js";
import { LineCleaner } from "./clean.js";
import { OutputBuffer, type TakenOutput } from "./output.js";
import { foregroundProcessGroup, killShellTree } from "./procs.js";
import { createNonce, MarkerScanner, setupLine, shellQuote } from "./sentinel.js";
import { makeTerminalDir } from "./temp-dirs.js";

/** Terminal size the shell reports to programs: wide enough that tools rarely wrap. */
const COLS = 200;
const ROWS = 50;
const START_TIMEOUT_MS = 10_000;
/** Starts of a confined shell tried when a path bwrap was to mount over vanished meanwhile (see Shell.start). */
const START_ATTEMPTS = 3;
/** bwrap's complaint about a path (`bwrap: Can't mkdir parents for /x/y.sock: Read-only file system`). */
const BWRAP_PATH_FAILURE = /bwrap: Can't [^\n/]*(\/[^:\n]+):/;
/**
 * The variable that marks every process a shell starts (a random value per shell): when the shell ends, whatever still
 * carries it is killed, including what left its session and its process tree (`setsid`, double forks). A confined
 * shell does not need it (its PID namespace dies with it), but gets it too.
 */
export const SHELL_MARKER_VARIABLE = "CROW_SHELL_ID";

/** Where the shell is: starting up, at its prompt, running a command we sent, or gone. */
export type ShellState = "starting" | "idle" | "running" | "exited";

/** Every shell alive in this process, so a process 'exit' can kill them all synchronously. */
const liveShells = new Set<Shell>();
let exitHookInstalled = false;
function track(shell: Shell): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", () => {
      for (const live of liveShells) live.kill();
    });
  }
  liveShells.add(shell);
}

/**
 * The environment the shell starts with: the server's without its secrets (see child-env.ts: API keys, tokens,
 * passwords, whatever crow or `CROW_CHILD_ENV_DROP` names; `CROW_CHILD_ENV_ALLOW` lets names through), made
 * predictable for a program that reads its output.
 */
// `process.env` here is what the shell inherits (filtered), not a read of crow-mcp's settings (those are settings.ts's).
export function shellEnvironment(cwd: string, base: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const env = childEnvironment(base);
  // Our markers and prompt are set inside the shell; inherited ones would only interfere. COLUMNS/LINES from a
  // terminal the server may have been started in would contradict the PTY's size.
  for (const key of ["PROMPT_COMMAND", "PS0", "PS1", "PS2", "PS4", "BASH_ENV", "ENV", "HISTFILE", "COLUMNS", "LINES"])
    delete env[key];
  Object.assign(env, { TERM: "dumb", PAGER: "cat", GIT_PAGER: "cat", MANPAGER: "cat", SYSTEMD_PAGER: "", PWD: cwd });
  if (!env.LANG && !env.LC_ALL && !env.LC_CTYPE) env.LANG = "C.UTF-8";
  return env;
}

/**
 * The PTY addon (@lydell/node-pty ships a prebuilt binary per platform, as an optional package). Where it is missing
 * or does not load, the error says which module, in one line (no require stack), and what to do.
 */
async function loadPty(): Promise<typeof import("@lydell/node-pty")> {
  try {
    return await import("@lydell/node-pty");
  } catch (error) {
    const raw = errorText(error).split("\n")[0] ?? "";
    throw new Error(
      `the terminal's native module @lydell/node-pty does not load (${raw.replace(/ imported from .*$/, "")}), ` +
        `maybe no prebuilt binary for ${process.platform}-${process.arch} was installed: reinstall Crow ` +
        "(npm install -g crow-agent) and check that npm did not skip optional dependencies (--omit=optional)",
      { cause: error },
    );
  }
}

/**
 * One bash in a real PTY (`bash --norc --noprofile --noediting -i`, its own session and process group) and the
 * parsing of its output: markers (see sentinel.ts) tell when a command starts and ends, everything else is cleaned
 * and collected in {@link output} until someone takes it. Commands are not typed in: they are written to a private
 * file and the shell is told to `eval` it, so long lines, tabs, `!` and multi-line scripts reach bash exactly as
 * given, while `cd`, `export` and `source` still act on the shell itself.
 */
export class Shell {
  state: ShellState = "starting";
  /** The shell's working directory as of its last prompt. */
  cwd: string;
  /** Exit status of the last command we sent, once it has finished and until the result is reported. */
  finished: { exitCode: number } | undefined;
  /** Exit code of the bash process itself, once it has exited. */
  shellExitCode: number | undefined;
  /** When output last arrived (ms since epoch). */
  lastOutputAt = Date.now();
  /** Characters of cleaned output received so far (to tell whether a program reacted to something). */
  receivedChars = 0;
  /** The command being run, for messages. */
  command = "";
  /** Called with each piece of cleaned output while set (progress streaming). */
  onOutput: ((text: string) => void) | undefined;
  /** Called after every change (output, completion, exit) while set: the single waiter's wake-up. */
  onChange: (() => void) | undefined;

  readonly output = new OutputBuffer();
  /** What confines this shell (fixed for its life: a different policy needs a new shell). */
  readonly policy: SandboxPolicy;
  private readonly pty: IPty;
  /** Host pid of bash when it runs inside bwrap (the PTY's own process is then bwrap). */
  private innerPid: number | undefined;
  private readonly scanner: MarkerScanner;
  private readonly cleaner: LineCleaner;
  private readonly dir: string;
  private readonly commandFile: string;
  /** This shell's value of {@link SHELL_MARKER_VARIABLE}. */
  private readonly marker = randomBytes(16).toString("hex");
  private awaitingBegin = false;
  private killed = false;
  /** The guards planted for this shell (sandbox/later.ts), removed when it ends. */
  private planted: string[] = [];
  /** The mount namespace of the confined bash, whose mounts end with it. */
  private namespace: string | undefined;

  private constructor(cwd: string, policy: SandboxPolicy, spawn: typeof import("@lydell/node-pty").spawn) {
    this.cwd = cwd;
    this.policy = policy;
    const nonce = createNonce();
    this.scanner = new MarkerScanner(nonce);
    this.cleaner = new LineCleaner((text) => {
      this.receivedChars += text.length;
      this.output.push(text);
      this.onOutput?.(text);
    });
    this.dir = makeTerminalDir();
    this.commandFile = path.join(this.dir, "command");
    const flags = ["--norc", "--noprofile", "--noediting", "-i"];
    const env = shellEnvironment(cwd);
    env[SHELL_MARKER_VARIABLE] = this.marker;
    // Unconfined, bash from PATH as the user would start it, but not from the working directory.
    let argv = [trustedExecutable("bash") ?? "bash", ...flags];
    if (policy.mode !== "off") {
      const available = sandboxAvailability();
      if (!available.ok) {
        this.removeDir();
        throw new Error(`the sandbox cannot start: ${available.reason}`);
      }
      // The probe took both from outside its working directory; a shared toolserver's session may write elsewhere.
      const planted = [available.bwrap, available.bash].find((p) => writableRoots(policy).some((r) => inside(p, r)));
      if (planted) {
        this.removeDir();
        throw new Error(
          `the sandbox cannot start: ${planted} lies in a directory this session may write, so it cannot be trusted to build the sandbox. Start crow-mcp with a PATH whose bwrap and bash are outside the workspace (e.g. /usr/bin).`,
        );
      }
      const privateTmp = path.join(this.dir, "tmp");
      mkdirSync(privateTmp, { mode: 0o700 });
      // The lockfile, .agents and .crow of each writable root must exist to be bound read-only.
      this.planted = plantGuards(policy, writableRoots(policy));
      argv = [
        available.bwrap,
        ...bwrapArgs(policy, { cwd, privateTmp, commandDir: this.dir, ...(env.PATH ? { searchPath: env.PATH } : {}) }),
        available.bash,
        ...flags,
      ];
      // The host's TMPDIR may be read-only inside; the shell's own /tmp is the private one.
      env.TMPDIR = "/tmp";
    }
    this.pty = spawn(argv[0] ?? "bash", argv.slice(1), { name: "dumb", cols: COLS, rows: ROWS, cwd, env });
    track(this);
    this.pty.onData((chunk) => this.receive(chunk));
    this.pty.onExit(({ exitCode }) => this.exited(exitCode));
    this.pty.write(`${setupLine(nonce)}\r`);
  }

  /** Starts a shell in `cwd`, confined by `policy`, and resolves once it is configured and at its prompt. */
  static async start(cwd: string, policy: SandboxPolicy = UNCONFINED): Promise<Shell> {
    // The PTY addon loads with the first shell: a connection that never uses the terminal does not pay for it.
    const { spawn } = await loadPty();
    for (let attempt = 1; ; attempt++) {
      const shell = new Shell(cwd, policy, spawn);
      try {
        await shell.ready();
        return shell;
      } catch (error) {
        // A path the sandbox was to cover (another program's unix socket, listed just before) was removed while
        // bwrap set up: the next attempt lists what exists then.
        if (attempt >= START_ATTEMPTS || !shell.lostMountPoint()) throw error;
      }
    }
  }

  /** Resolves once the shell is configured and at its prompt; rejects with why it is not (it is then gone). */
  private ready(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.kill();
        reject(new Error(`bash did not become ready within ${START_TIMEOUT_MS / 1000}s`));
      }, START_TIMEOUT_MS);
      this.onChange = () => {
        if (this.state === "starting") return;
        clearTimeout(timer);
        this.onChange = undefined;
        if (this.state === "exited") {
          reject(new Error(`bash exited during startup (code ${this.shellExitCode})${this.startupOutput()}`));
        } else {
          // Inside bwrap the PTY's process is bwrap; bash, at its prompt, holds the terminal's foreground group.
          if (this.policy.mode !== "off") {
            this.innerPid = foregroundProcessGroup(this.pty.pid);
            if (this.innerPid !== undefined) this.namespace = mountNamespace(this.innerPid);
          }
          resolve();
        }
      };
    });
  }

  /** Whether bwrap failed to start because a path it was to mount over no longer exists (see {@link start}). */
  private lostMountPoint(): boolean {
    if (this.policy.mode === "off") return false;
    const named = BWRAP_PATH_FAILURE.exec(this.startupText)?.[1];
    return named !== undefined && !existsSync(named);
  }

  /**
   * The host process id of bash (also its process group; the terminal's session id unless it runs inside bwrap,
   * whose process leads the session then).
   */
  get pid(): number {
    return this.innerPid ?? this.pty.pid;
  }

  /** Runs `command` (any bash, multi-line included) in the shell. The shell must be idle. */
  send(command: string): void {
    writeFileSync(this.commandFile, command);
    this.command = command;
    this.finished = undefined;
    this.awaitingBegin = true;
    this.state = "running";
    // Read without a command substitution (which would fork and reset $?), restore $?, then eval: no fork at all.
    this.pty.write(
      `IFS= read -r -d '' __crow_c <${shellQuote(this.commandFile)}; __crow_st "$__crow_rc"; eval "$__crow_c"\r`,
    );
  }

  /** Writes raw bytes to the terminal (input for the running program, control characters). */
  write(data: string): void {
    if (this.state !== "exited") this.pty.write(data);
  }

  /** True when output is waiting in an unfinished line (typically a prompt such as `>>> ` or `name? `). */
  get endsInPartialLine(): boolean {
    return this.cleaner.hasPending;
  }

  /** Everything collected since the last take, including an unfinished last line (e.g. a prompt). */
  take(): TakenOutput {
    this.cleaner.flush();
    return this.output.take();
  }

  /** Kills bash and everything it started, synchronously. Idempotent. */
  kill(): void {
    if (this.killed) return;
    this.killed = true;
    liveShells.delete(this);
    // The session leader is the PTY's process (bwrap when confined): its session holds every job of the shell; the
    // marker catches what left both the session and the tree.
    killShellTree(this.pty.pid, { name: SHELL_MARKER_VARIABLE, value: this.marker });
    try {
      this.pty.kill("SIGKILL");
    } catch {
      // Already gone.
    }
    this.removeDir();
    removePlanted(this.planted, this.namespace);
  }

  private startupText = "";

  /**
   * What the process printed before it failed to start (bwrap's complaint), for the error message: without the
   * terminal's echo of the setup line we typed, which is Crow's own and says nothing to the reader.
   */
  private startupOutput(): string {
    const text = this.startupText
      .split(/\r?\n|\r/)
      .filter((line) => !line.includes("__crow_"))
      .join("\n")
      .trim();
    return text ? `: ${text.slice(-500)}` : "";
  }

  private receive(chunk: string): void {
    this.lastOutputAt = Date.now();
    if (this.state === "starting") this.startupText = (this.startupText + chunk).slice(-2000);
    for (const event of this.scanner.feed(chunk)) {
      if (event.type === "text") {
        // Before the begin marker comes the echo of the line we typed (and, at startup, bash's banner prompt).
        if (this.state === "starting" || this.awaitingBegin) continue;
        this.cleaner.push(event.text);
      } else if (event.type === "begin") {
        if (this.awaitingBegin) {
          this.awaitingBegin = false;
          this.cleaner.reset();
        }
      } else {
        this.cwd = event.cwd;
        if (this.state === "starting") {
          this.state = "idle";
        } else if (this.state === "running" && !this.awaitingBegin) {
          this.cleaner.flush();
          this.state = "idle";
          this.finished = { exitCode: event.exitCode };
        }
      }
    }
    this.onChange?.();
  }

  private exited(exitCode: number): void {
    const rest = this.scanner.flush();
    if (rest && this.state !== "starting") this.cleaner.push(rest);
    this.cleaner.flush();
    this.state = "exited";
    this.shellExitCode = exitCode;
    log.debug(`shell ${this.pid} exited with ${exitCode}`);
    // Jobs the shell left behind (`sleep 100 &` then `exit`) belong to a shell that no longer exists: kill them.
    this.kill();
    this.onChange?.();
  }

  private removeDir(): void {
    try {
      rmSync(this.dir, { recursive: true, force: true });
    } catch (error) {
      log.debug("could not remove the terminal's temp dir", error);
    }
  }
}
