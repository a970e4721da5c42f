/**
 * Helpers of the `crow run` tests: the built `crow run` as a subprocess (pipes) or in a pseudo-terminal, against
 * the mock LLM, with a private CROW_HOME so no user configuration or store is touched.
 */
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { CROW_BIN, type MockLlm, startMockLlm, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { type IPty, spawn as spawnPty } from "@lydell/node-pty";

/**
 * The environment of a `crow run` under test: the mock as provider, fast retries, a private CROW_HOME that is also
 * HOME (the agent's shells write their history there, never in the real HOME).
 */
export function runEnv(
  mockUrl: string,
  home: string,
  extra: Record<string, string | undefined> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_") && key !== "NO_COLOR") {
      env[key] = value;
    }
  }
  Object.assign(env, {
    CROW_HOME: home,
    HOME: home,
    OPENAI_BASE_URL: mockUrl,
    CROW_MODEL: "mock-model",
    CROW_MAX_RETRIES: "1",
    CROW_RETRY_BASE_MS: "5",
    // As the test runner has it: language servers off unless a test turns them on (CROW_LSP: undefined).
    CROW_LSP: "off",
  });
  for (const [key, value] of Object.entries(extra)) {
    if (value === undefined) delete env[key];
    else env[key] = value;
  }
  return env;
}

export async function tempHome(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-run-home-"));
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** What a `describe` of `crow run` tests works with: the scripted model, a workspace, a private HOME, its env. */
export interface RunFixture {
  readonly mock: MockLlm;
  readonly ws: TempWorkspace;
  readonly home: { dir: string; cleanup: () => Promise<void> };
  /** {@link runEnv} for the mock and the home. */
  readonly env: Record<string, string>;
}

/**
 * Makes a {@link RunFixture} before the enclosing `describe`'s tests and removes it after them. Its fields are set
 * once the `before` hook ran: read them inside tests, not while the `describe` body runs.
 */
export function useRunFixture(): RunFixture {
  const fx = {} as { -readonly [K in keyof RunFixture]: RunFixture[K] };
  before(async () => {
    fx.mock = await startMockLlm();
    fx.ws = await tempWorkspace();
    fx.home = await tempHome();
    fx.env = runEnv(fx.mock.url, fx.home.dir);
  });
  after(async () => {
    await fx.mock?.close();
    await fx.ws?.cleanup();
    await fx.home?.cleanup();
  });
  return fx;
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `crow run <args>` with pipes (no TTY); `input` is written to stdin, which is then closed. */
export function runCrow(
  args: readonly string[],
  options: { env: Record<string, string>; input?: string; cwd?: string },
): Promise<RunResult> {
  return runProcess(process.execPath, [CROW_BIN, "run", ...args], options);
}

/** Runs `file <args>` with pipes (no TTY); `input` is written to stdin, which is then closed. */
export function runProcess(
  file: string,
  args: readonly string[],
  options: { env: Record<string, string>; input?: string; cwd?: string },
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, {
      env: options.env,
      cwd: options.cwd,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => {
      stdout += t;
    });
    child.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(options.input ?? "");
  });
}

// The spinner's frames and their erasure. A frame is drawn only after 150 ms without output, so whether one shows
// depends on the machine's load; it always erases itself before anything else is written, so a person never reads it.
const SGR = "(?:\x1b\\[[0-9;]*m)*";
const FRAME = `${SGR}[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏]${SGR}`;
const SPINNER = new RegExp(
  [
    // At the start of a line: "\r⠋ label" then erase to the end, redrawn per frame, finally erased with "\r\x1b[K".
    `(?:\r${FRAME} ${SGR}[^\r\n\x1b]*${SGR}\x1b\\[K)+(?:\r\x1b\\[K)?`,
    // Mid-line: one glyph and a backspace per frame, erased before the next write.
    `(?:${FRAME}\b)+(?:\x1b\\[K)?`,
  ].join("|"),
  "g",
);

/** The raw output without the spinner's transient frames (timing-dependent, never left on the screen). */
export function withoutSpinner(raw: string): string {
  return raw.replace(SPINNER, "");
}

/** What a person reads: the output without spinner frames, ANSI escape sequences and carriage returns. */
export function plain(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping escape sequences
  const escapes = /\x1b\[[0-9;?]*[A-Za-z]/g;
  return withoutSpinner(text).replace(escapes, "").replace(/\r/g, "");
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for escape sequences
export const ANSI = /\x1b\[/;

/** `crow run` in a pseudo-terminal: typed input, raw output, waits on what appears. */
export class PtyRun {
  output = "";
  readonly exited: Promise<number>;
  private readonly pty: IPty;
  private waiters: Array<{ match: RegExp; from: number; resolve: (text: string) => void }> = [];

  constructor(args: readonly string[], env: Record<string, string>, cwd: string) {
    this.pty = spawnPty(process.execPath, [CROW_BIN, "run", ...args], {
      name: "xterm-256color",
      cols: 120,
      rows: 40,
      cwd,
      env: { ...env, TERM: "xterm-256color" },
    });
    this.pty.onData((data) => {
      this.output += data;
      this.check();
    });
    this.exited = new Promise((resolve) => this.pty.onExit(({ exitCode }) => resolve(exitCode)));
  }

  /** Output so far without escape sequences. */
  get text(): string {
    return plain(this.output);
  }

  /** Marks the current end of output: later `waitFor` calls with `after` only look past it. */
  mark(): number {
    return this.output.length;
  }

  /** Resolves with the output (from `after`, plain) once `match` appears there. */
  waitFor(match: RegExp, after = 0): Promise<string> {
    return new Promise((resolve) => {
      this.waiters.push({ match, from: after, resolve });
      this.check();
    });
  }

  write(data: string): void {
    this.pty.write(data);
  }

  kill(): void {
    try {
      this.pty.kill("SIGKILL");
    } catch {
      // already gone
    }
  }

  private check(): void {
    for (const waiter of [...this.waiters]) {
      const seen = plain(this.output.slice(waiter.from));
      if (waiter.match.test(seen)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(seen);
      }
    }
  }
}
