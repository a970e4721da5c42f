/**
 * crow-mcp's command line, read and checked: the help, the flags, the environment's settings (settings.ts) and what
 * a combination of them asks for (see {@link Invocation}; command.ts serves it). Every usage error exits with status 2
 * and a message naming the flag or variable, before anything is served. `--cwd` is applied here, first: the other
 * paths given are relative to it.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { errorText } from "./error-text.js";
import type { HttpServerOptions } from "./http.js";
import { setLogLevel } from "./log.js";
import { parseArgs } from "./parse-args.js";
import { sandboxAvailability, useBwrapProgram } from "./sandbox/bwrap.js";
import type { ServerOptions } from "./server.js";
import { type EnvSettings, readSettings } from "./settings.js";
import { TOOL_NAMES } from "./tools/list.js";
import { VERSION } from "./version.js";

const HELP = `crow-mcp ${VERSION} — Crow's MCP toolserver: ${TOOL_NAMES}.

Usage:
  crow-mcp                         serve MCP over stdio (what an MCP client launches)
  crow-mcp --http [options]        serve MCP over Streamable HTTP at /mcp
  crow-mcp --socket <path>         serve MCP on a unix socket, one JSON-RPC message per line and one
                                   session per connection (how crow shares one crow-mcp among its
                                   sessions; initialize may name the session's cwd in _meta["crow/cwd"])

Options:
  --http                 serve Streamable HTTP instead of stdio
  --host <host>          interface to bind (default 127.0.0.1)
  --port <port>          port to bind (default 7419; 0 picks a free port)
  --token-file <file>    read the token clients must send as "Authorization: Bearer <token>" from
                         this file (its first line); or set CROW_MCP_TOKEN. Without either, a random
                         token is generated and printed on stderr
  --token <token>        the token itself: avoid it, every local user sees it in ps (a warning says so)
  --no-auth              serve without a token: anyone who can reach the port (any local user, on
                         loopback) can run commands as you. Only for a client that cannot send a header
  --allowed-host <host>  also accept this Host header (repeatable; for non-loopback binds; on 0.0.0.0
                         without it, only this machine's own names and addresses are accepted)
  --exit-with-stdin      with --socket: stop when stdin closes (the parent that started it is gone), and
                         remove the socket's directory if it is then empty and named crow-mcp-*
  --secret-stdin         with --socket: read a secret from the first line of stdin; only a connection whose
                         initialize carries it in _meta["crow/secret"] opens a session (how crow keeps
                         its sandboxed shells from opening sessions of their own)
  --cwd <dir>            working directory for the tools (default: the current directory)
  --sandbox <mode>       confine the terminal's shell and write/edit with bubblewrap (Linux):
                         workspace-write (write only in the session's cwd and a private /tmp),
                         read-only (commands run, nothing is writable but /tmp; network off) or off
                         (default; the crow agent sends each session's own policy instead)
  --soft-timeout <s>     seconds without output before a command returns partial output
                         (default 30, or CROW_TERMINAL_SOFT_TIMEOUT)
  -h, --help             show this help
  -v, --version          print the version

Environment (read once at start; a value not accepted stops crow-mcp with status 2):
  SEARXNG_URL            SearXNG base URL for web_search (default http://localhost:2946)
  CROW_WEB_TIMEOUT       seconds before web_search / web_fetch give up (default 20 / 30)
  CROW_MCP_LOG           log level on stderr: error, warn (default), info, debug
  CROW_LSP               off: no language-server diagnostics after write and edit (default on)
  CROW_LSP_WAIT          seconds to wait for a warm language server's diagnostics (default 2)
  CROW_LSP_START_WAIT    seconds to wait while a language server starts (default 20)
  CROW_BWRAP             the bubblewrap --sandbox runs: a name looked up on PATH, or a path (default bwrap)

stdout carries only the MCP protocol; logs go to stderr.`;

/** `--http`'s server settings: the address is always set; a token unless `--no-auth`. */
export type HttpSettings = HttpServerOptions & { host: string; port: number };

/** What the command line asks for. */
export type Invocation =
  /** `--help` or `--version`: print `text` on stdout, serve nothing. */
  | { kind: "print"; text: string }
  /** `--socket`: serve on the unix socket at `socketPath`. */
  | { kind: "socket"; options: ServerOptions; socketPath: string; exitWithStdin: boolean; secretStdin: boolean }
  /** The default: serve on stdin and stdout. */
  | { kind: "stdio"; options: ServerOptions }
  /** `--http`: serve Streamable HTTP; `showToken` when the token was generated (nobody knows it yet). */
  | { kind: "http"; options: HttpSettings; showToken: boolean };

/** A usage error: says `message` on stderr with a pointer to --help, and exits with status 2. */
export function fail(message: string): never {
  process.stderr.write(`crow-mcp: ${message}\nRun 'crow-mcp --help' for usage.\n`);
  process.exit(2);
}

function parse() {
  try {
    return parseArgs({
      options: {
        http: { type: "boolean" },
        socket: { type: "string" },
        "exit-with-stdin": { type: "boolean" },
        "secret-stdin": { type: "boolean" },
        host: { type: "string" },
        port: { type: "string" },
        token: { type: "string" },
        "token-file": { type: "string" },
        "no-auth": { type: "boolean" },
        "allowed-host": { type: "string", multiple: true },
        // The other spelling (crow acp --listen's first one), accepted alike.
        "allow-host": { type: "string", multiple: true },
        cwd: { type: "string" },
        "soft-timeout": { type: "string" },
        sandbox: { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "v" },
      },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (error) {
    fail(errorText(error));
  }
}

/** The environment's settings, or a usage error naming the variable that is wrong. */
function environment(): EnvSettings {
  try {
    return readSettings(process.env);
  } catch (error) {
    fail(errorText(error));
  }
}

function positiveNumber(raw: string | undefined, what: string, allowZero = false): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0))
    fail(`${what} must be a positive number, got "${raw}"`);
  return value;
}

/** The token in `file` (its first line, trimmed); a usage error when it cannot be read or is empty. */
function tokenFromFile(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    fail(`cannot read --token-file ${file}: ${errorText(error)}`);
  }
  const token = (text.split("\n")[0] ?? "").trim();
  if (token === "") fail(`--token-file ${file} is empty: put the token on its first line`);
  return token;
}

type Args = ReturnType<typeof parse>;

/** The flags that only `--http` takes. */
const HTTP_FLAGS = ["host", "port", "token", "token-file", "no-auth", "allowed-host", "allow-host"] as const;

/**
 * Reads the process's arguments and its environment's settings: what to serve, and how. Applies the settings that
 * are the process's (the log's level, the bwrap to run) and `--cwd`, checks that `--sandbox` can confine (a check
 * that did not finish is said, not fatal), and exits with a usage error on a flag or variable that is wrong or a flag
 * that does not fit the others. `--help` and `--version` answer whatever the environment holds.
 */
export function readInvocation(): Invocation {
  const args = parse();
  if (args.help) return { kind: "print", text: HELP };
  if (args.version) return { kind: "print", text: VERSION };
  const env = environment();
  setLogLevel(env.logLevel);
  useBwrapProgram(env.bwrap);
  if (args.cwd) {
    try {
      process.chdir(args.cwd);
    } catch (error) {
      fail(`cannot use --cwd ${args.cwd}: ${errorText(error)}`);
    }
  }
  const softTimeoutSeconds = positiveNumber(args["soft-timeout"], "--soft-timeout") ?? env.softTimeoutSeconds;
  const sandboxMode = args.sandbox ?? "off";
  if (sandboxMode !== "workspace-write" && sandboxMode !== "read-only" && sandboxMode !== "off") {
    fail(`--sandbox must be workspace-write, read-only or off, got "${sandboxMode}"`);
  }
  if (sandboxMode !== "off") {
    const available = sandboxAvailability();
    // A check that did not finish is no verdict: every shell start checks again and refuses until one passes.
    if (!available.ok && !available.undecided) fail(`--sandbox ${sandboxMode}: ${available.reason}`);
    if (!available.ok) process.stderr.write(`crow-mcp: --sandbox ${sandboxMode}: ${available.reason}\n`);
  }
  const options: ServerOptions = {
    cwd: process.cwd(),
    sandboxMode,
    ...(softTimeoutSeconds !== undefined ? { terminal: { softTimeoutSeconds } } : {}),
    ...serverSettings(env),
  };

  if (args.socket !== undefined) {
    if (args.http) fail("--socket and --http exclude each other");
    for (const flag of HTTP_FLAGS) {
      if (args[flag] !== undefined) fail(`--${flag} only applies with --http`);
    }
    return {
      kind: "socket",
      options,
      socketPath: args.socket,
      exitWithStdin: args["exit-with-stdin"] === true,
      secretStdin: args["secret-stdin"] === true,
    };
  }
  if (args["exit-with-stdin"]) fail("--exit-with-stdin only applies with --socket");
  if (args["secret-stdin"]) fail("--secret-stdin only applies with --socket");
  if (!args.http) {
    for (const flag of HTTP_FLAGS) {
      if (args[flag] !== undefined) fail(`--${flag} only applies with --http`);
    }
    return { kind: "stdio", options };
  }
  return httpInvocation(args, options, env.token);
}

/** The server's options that the environment sets: the web tools' and the language servers' (see settings.ts). */
function serverSettings(env: EnvSettings): Pick<ServerOptions, "web" | "lspDefaults"> {
  const web = {
    ...(env.searxngUrl !== undefined ? { searxngUrl: env.searxngUrl } : {}),
    ...(env.webTimeoutMs !== undefined ? { timeoutMs: env.webTimeoutMs } : {}),
  };
  const lspDefaults = {
    ...(env.lspOff ? { off: true } : {}),
    ...(env.lspWaitMs !== undefined ? { waitMs: env.lspWaitMs } : {}),
    ...(env.lspStartWaitMs !== undefined ? { startWaitMs: env.lspStartWaitMs } : {}),
  };
  return {
    ...(Object.keys(web).length > 0 ? { web } : {}),
    ...(Object.keys(lspDefaults).length > 0 ? { lspDefaults } : {}),
  };
}

/**
 * `--http`'s settings on top of `options`: the port, and the token clients must send (given by `--token`,
 * `--token-file` or CROW_MCP_TOKEN, `envToken`, else generated; none with `--no-auth`). Warns when `--token` exposed
 * it.
 */
function httpInvocation(args: Args, options: ServerOptions, envToken: string | undefined): Invocation {
  const port = positiveNumber(args.port, "--port", true) ?? 7419;
  if (!Number.isInteger(port) || port > 65535)
    fail(`--port must be an integer between 0 and 65535, got "${args.port}"`);
  if (args.token !== undefined && args["token-file"] !== undefined) fail("--token and --token-file exclude each other");
  const given =
    args.token ?? (args["token-file"] !== undefined ? tokenFromFile(args["token-file"]) : undefined) ?? envToken;
  if (args["no-auth"] && given)
    fail("--no-auth and a token (--token, --token-file or CROW_MCP_TOKEN) exclude each other");
  if (given === "") fail("--token must not be empty (use --no-auth to serve without a token)");
  if (args.token !== undefined) {
    // Always said (not subject to CROW_MCP_LOG): the token is already exposed.
    process.stderr.write(
      "crow-mcp: warning: --token puts the token on the command line, where every user of this machine can read it (ps, /proc/<pid>/cmdline); use --token-file FILE or CROW_MCP_TOKEN instead.\n",
    );
  }
  // Serving tools over HTTP without a token lets any local user run commands as this user: a token is the default.
  const token = args["no-auth"] ? undefined : (given ?? randomBytes(24).toString("base64url"));
  return {
    kind: "http",
    options: {
      ...options,
      // A sandboxed shell must not read the token and open an unconfined session of its own on this server.
      ...(args["token-file"] !== undefined ? { hideFromSandbox: [path.resolve(args["token-file"])] } : {}),
      host: args.host ?? "127.0.0.1",
      port,
      ...(token ? { token } : {}),
      ...(args["allowed-host"] || args["allow-host"]
        ? { allowedHosts: [...(args["allowed-host"] ?? []), ...(args["allow-host"] ?? [])] }
        : {}),
    },
    showToken: token !== undefined && given === undefined,
  };
}
