// The crow-mcp command line: what `crow-mcp [options]` does (started by main.ts).
import { randomBytes } from "node:crypto";
import { readFileSync, rmdirSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { log } from "./log.js";
import { sandboxAvailability } from "./sandbox/bwrap.js";
import type { ServerOptions } from "./server.js";
import { VERSION } from "./version.js";

const HELP = `crow-mcp ${VERSION} — Crow's MCP toolserver: terminal, read, write, edit, web_search, web_fetch.

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

Environment:
  SEARXNG_URL            SearXNG base URL for web_search (default http://localhost:2946)
  CROW_WEB_TIMEOUT       seconds before web_search / web_fetch give up (default 20 / 30)
  CROW_MCP_LOG           log level on stderr: error, warn (default), info, debug

stdout carries only the MCP protocol; logs go to stderr.`;

function fail(message: string): never {
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
    fail((error as Error).message);
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
    fail(`cannot read --token-file ${file}: ${(error as Error).message}`);
  }
  const token = (text.split("\n")[0] ?? "").trim();
  if (token === "") fail(`--token-file ${file} is empty: put the token on its first line`);
  return token;
}

/** Runs crow-mcp with the process's arguments: serves until its transport or a signal stops it. */
export async function runCrowMcp(): Promise<void> {
  const args = parse();
  if (args.help) {
    process.stdout.write(`${HELP}\n`);
    return;
  }
  if (args.version) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (args.cwd) {
    try {
      process.chdir(args.cwd);
    } catch (error) {
      fail(`cannot use --cwd ${args.cwd}: ${(error as Error).message}`);
    }
  }
  const softTimeoutSeconds =
    positiveNumber(args["soft-timeout"], "--soft-timeout") ??
    positiveNumber(process.env.CROW_TERMINAL_SOFT_TIMEOUT, "CROW_TERMINAL_SOFT_TIMEOUT");
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
  };

  if (args.socket !== undefined) {
    if (args.http) fail("--socket and --http exclude each other");
    for (const flag of ["host", "port", "token", "token-file", "no-auth", "allowed-host"] as const) {
      if (args[flag] !== undefined) fail(`--${flag} only applies with --http`);
    }
    await serveSocket(args.socket, options, args["exit-with-stdin"] === true, args["secret-stdin"] === true);
    return;
  }
  if (args["exit-with-stdin"]) fail("--exit-with-stdin only applies with --socket");
  if (args["secret-stdin"]) fail("--secret-stdin only applies with --socket");
  if (!args.http) {
    for (const flag of ["host", "port", "token", "token-file", "no-auth", "allowed-host"] as const) {
      if (args[flag] !== undefined) fail(`--${flag} only applies with --http`);
    }
    await serveStdio(options);
    return;
  }
  const port = positiveNumber(args.port, "--port", true) ?? 7419;
  if (!Number.isInteger(port) || port > 65535)
    fail(`--port must be an integer between 0 and 65535, got "${args.port}"`);
  if (args.token !== undefined && args["token-file"] !== undefined) fail("--token and --token-file exclude each other");
  const given =
    args.token ??
    (args["token-file"] !== undefined ? tokenFromFile(args["token-file"]) : undefined) ??
    (process.env.CROW_MCP_TOKEN || undefined);
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
  const host = args.host ?? "127.0.0.1";
  // Loaded only for --http: express and the HTTP transport cost ~20 MB and ~70 ms that stdio never needs.
  const { startHttpServer } = await import("./http.js");
  let running: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    running = await startHttpServer({
      ...options,
      // A sandboxed shell must not read the token and open an unconfined session of its own on this server.
      ...(args["token-file"] !== undefined ? { hideFromSandbox: [path.resolve(args["token-file"])] } : {}),
      host,
      port,
      ...(token ? { token } : {}),
      ...(args["allowed-host"] ? { allowedHosts: args["allowed-host"] } : {}),
    });
  } catch (error) {
    fail(`cannot listen on ${host}:${port}: ${(error as Error).message}`);
  }
  if (!token) {
    const who = ["127.0.0.1", "localhost", "::1"].includes(host) ? "any user of this machine" : "anyone";
    log.warn(`--no-auth: serving without a token, so ${who} who can reach ${running.url} can run commands as you.`);
  }
  process.stderr.write(`crow-mcp ${VERSION} listening on ${running.url}\n`);
  if (token && given === undefined) {
    process.stderr.write(`crow-mcp: token (send "Authorization: Bearer <token>"): ${token}\n`);
  }
  const stop = () => {
    void running.close().then(() => process.exit(0));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
}

/**
 * The first line of stdin (the agent's secret for the socket), without its newline. Rejects when stdin ends first or
 * the line is empty: then no connection can open a session.
 */
function secretFromStdin(): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("utf8");
      const end = text.indexOf("\n");
      if (end < 0) return;
      process.stdin.off("data", onData);
      const secret = text.slice(0, end).trim();
      if (secret === "") reject(new Error("--secret-stdin: the first line of stdin is empty"));
      else resolve(secret);
    };
    process.stdin.on("data", onData);
    process.stdin.once("end", () => reject(new Error("--secret-stdin: stdin ended before the secret's line")));
    process.stdin.resume();
  });
}

async function serveSocket(
  socketPath: string,
  options: ServerOptions,
  exitWithStdin: boolean,
  secretStdin: boolean,
): Promise<void> {
  const { startSocketServer } = await import("./socket.js");
  let running: Awaited<ReturnType<typeof startSocketServer>>;
  const secret = secretStdin ? secretFromStdin() : undefined;
  secret?.catch((error: unknown) => log.error((error as Error).message));
  try {
    running = await startSocketServer(socketPath, { ...options, warmUp: true, ...(secret ? { secret } : {}) });
  } catch (error) {
    fail(`cannot listen on ${socketPath}: ${(error as Error).message}`);
  }
  let stopping = false;
  const stop = (afterClose?: () => void) => {
    if (stopping) return;
    stopping = true;
    void running.close().finally(() => {
      afterClose?.();
      process.exit(0);
    });
  };
  process.once("SIGINT", () => stop());
  process.once("SIGTERM", () => stop());
  if (exitWithStdin) {
    // The parent is gone, perhaps by SIGKILL, so it cannot remove the private directory it made for the socket
    // (crow's `crow-mcp-XXXXXX`): once the socket is closed (which unlinks it), remove that directory if empty.
    const parentGone = () => stop(() => removePrivateSocketDir(socketPath));
    process.stdin.once("end", parentGone);
    process.stdin.once("error", parentGone);
    process.stdin.resume();
  }
  process.stderr.write(`crow-mcp ${VERSION} listening on unix:${socketPath}\n`);
}

/** Removes the socket's directory when it is crow's private one (`crow-mcp-*`) and empty; anything else stays. */
function removePrivateSocketDir(socketPath: string): void {
  const dir = path.dirname(path.resolve(socketPath));
  if (!path.basename(dir).startsWith("crow-mcp-")) return;
  try {
    rmdirSync(dir); // never recursive: a directory holding anything else is left alone
  } catch {
    // not empty, or already removed by the agent's own exit handler
  }
}

async function serveStdio(options: ServerOptions): Promise<void> {
  // Loaded here, not at the top: --socket prints its listening line before it loads the SDK and the tools.
  const [{ createServer }, { LineTransport, STDIO_MAX_LINE_BYTES }] = await Promise.all([
    import("./server.js"),
    import("./line-transport.js"),
  ]);
  const crow = createServer(options);
  // Crow's line transport, not the MCP SDK's stdio one: that one, handed a line over its limit, closed the transport
  // and crow-mcp exited 0 without a word; this one skips the line, says so on stderr, answers the request with an
  // error when it can read its id, and goes on serving.
  const transport = new LineTransport(process.stdin, process.stdout, {
    limit: STDIO_MAX_LINE_BYTES,
    end: () => process.stdin.pause(),
  });
  transport.onerror = (error) => log.warn(`stdio: ${error.message}`);
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    void crow.close().finally(() => process.exit(code));
  };
  transport.onclose = () => stop(0);
  process.stdin.once("end", () => stop(0));
  process.once("SIGINT", () => stop(0));
  process.once("SIGTERM", () => stop(0));
  await crow.server.connect(transport);
  log.info(`serving stdio in ${options.cwd}`);
  // Started by hand in a terminal, it would otherwise sit silent: say what it expects (stderr; stdout is protocol).
  if (process.stdin.isTTY) {
    process.stderr.write(
      "crow-mcp: waiting for an MCP client on stdin (JSON-RPC, one message per line); an MCP client launches this. Try it with the MCP inspector or 'crow-mcp --http'; Ctrl-C quits.\n",
    );
  }
}
