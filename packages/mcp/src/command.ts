// The crow-mcp command line: what `crow-mcp [options]` does (started by main.ts). args.ts reads and checks the
// arguments; here is the serving of what they ask for: stdio, a unix socket or Streamable HTTP.
import { rmdirSync } from "node:fs";
import path from "node:path";
import { fail, type HttpSettings, readInvocation } from "./args.js";
import { errorText } from "./error-text.js";
import { log } from "./log.js";
import { stopLanguageServers } from "./lsp/pool.js";
import type { ServerOptions } from "./server.js";
import { VERSION } from "./version.js";

/** Runs crow-mcp with the process's arguments: serves until its transport or a signal stops it. */
export async function runCrowMcp(): Promise<void> {
  const invocation = readInvocation();
  switch (invocation.kind) {
    case "print":
      process.stdout.write(`${invocation.text}\n`);
      return;
    case "socket":
      return serveSocket(invocation.socketPath, invocation.options, invocation.exitWithStdin, invocation.secretStdin);
    case "stdio":
      return serveStdio(invocation.options);
    case "http":
      return serveHttp(invocation.options, invocation.showToken);
  }
}

/** Serves Streamable HTTP at `options.host`:`options.port`; says where, and the token when it was generated. */
async function serveHttp(options: HttpSettings, showToken: boolean): Promise<void> {
  const { host, port, token } = options;
  // Loaded only for --http: express and the HTTP transport cost ~20 MB and ~70 ms that stdio never needs.
  const { startHttpServer } = await import("./http.js");
  let running: Awaited<ReturnType<typeof startHttpServer>>;
  try {
    running = await startHttpServer(options);
  } catch (error) {
    fail(`cannot listen on ${host}:${port}: ${errorText(error)}`);
  }
  if (!token) {
    const who = ["127.0.0.1", "localhost", "::1"].includes(host) ? "any user of this machine" : "anyone";
    log.warn(`--no-auth: serving without a token, so ${who} who can reach ${running.url} can run commands as you.`);
  }
  process.stderr.write(`crow-mcp ${VERSION} listening on ${running.url}\n`);
  if (token && showToken) {
    process.stderr.write(`crow-mcp: token (send "Authorization: Bearer <token>"): ${token}\n`);
  }
  const stop = () => {
    void Promise.all([running.close(), stopLanguageServers()]).then(() => process.exit(0));
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
  secret?.catch((error: unknown) => log.error(errorText(error)));
  try {
    running = await startSocketServer(socketPath, { ...options, warmUp: true, ...(secret ? { secret } : {}) });
  } catch (error) {
    fail(`cannot listen on ${socketPath}: ${errorText(error)}`);
  }
  let stopping = false;
  const stop = (afterClose?: () => void) => {
    if (stopping) return;
    stopping = true;
    void Promise.all([running.close(), stopLanguageServers()]).finally(() => {
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
    void Promise.all([crow.close(), stopLanguageServers()]).finally(() => process.exit(code));
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
