// The walls around crow-mcp's own unix socket, as crow starts it (`--socket … --secret-stdin`): a connection that does
// not carry the secret written on stdin opens no session, and no session's sandbox shows the socket's directory, even
// when its policy makes that directory's parent writable. As root and as an unprivileged user (setpriv), on real
// bubblewrap.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CROW_MCP_BIN, connectSocket, type SocketAnswer, socketInitialize } from "@crow/testkit";

const SECRET = "s3cret-of-the-agent-that-started-it";
const NOBODY = 65534;

const text = (answer: SocketAnswer) => ((answer.result?.content ?? []) as Array<{ text: string }>)[0]?.text ?? "";

interface Started {
  child: ChildProcess;
  socketPath: string;
  /** Parent of the socket's private directory, and the sessions' workspace. */
  base: string;
  ws: string;
}

/** crow-mcp on a socket in `<base>/crow-mcp-x/`, told SECRET on stdin; as `uid` when given. */
async function start(uid?: number): Promise<Started> {
  const base = mkdtempSync(path.join("/var/tmp", "crow-secret-"));
  const dir = path.join(base, "crow-mcp-x");
  const ws = path.join(base, "ws");
  mkdirSync(dir, { mode: 0o700 });
  mkdirSync(ws);
  if (uid !== undefined) {
    chmodSync(base, 0o755);
    for (const p of [base, dir, ws]) chownSync(p, uid, uid);
  }
  const socketPath = path.join(dir, "mcp.sock");
  const args = [CROW_MCP_BIN, "--socket", socketPath, "--exit-with-stdin", "--secret-stdin"];
  const child =
    uid === undefined
      ? spawn(process.execPath, args, {
          cwd: ws,
          env: { ...process.env, HOME: base },
          stdio: ["pipe", "ignore", "pipe"],
        })
      : spawn("setpriv", [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, ...args], {
          cwd: ws,
          env: { ...process.env, HOME: base },
          stdio: ["pipe", "ignore", "pipe"],
        });
  child.stdin?.write(`${SECRET}\n`);
  let stderr = "";
  try {
    await new Promise<void>((resolve, reject) => {
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes("listening on unix:")) resolve();
      });
      child.once("exit", (code) => reject(new Error(`crow-mcp exited with ${code} before listening: ${stderr}`)));
    });
  } catch (error) {
    rmSync(base, { recursive: true, force: true });
    throw error;
  }
  return { child, socketPath, base, ws };
}

async function stop(server: Started): Promise<void> {
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.stdin?.end();
  await exited;
  rmSync(server.base, { recursive: true, force: true });
}

/** `socketInitialize` with more `_meta`. */
function initialize(cwd: string, meta: Record<string, unknown>) {
  const base = socketInitialize(cwd);
  const params = base.params as { _meta?: Record<string, unknown> };
  return { ...base, params: { ...params, _meta: { ...params._meta, ...meta } } };
}

for (const who of ["root", "an unprivileged user"] as const) {
  const uid = who === "root" ? undefined : NOBODY;
  describe(`crow-mcp --socket --secret-stdin, run as ${who}`, () => {
    test("without the secret (none, or a wrong one) no session opens and no command runs", async () => {
      const server = await start(uid);
      try {
        for (const meta of [{}, { "crow/secret": "guess" }, { "crow/secret": `${SECRET}x` }]) {
          const session = await connectSocket(server.socketPath);
          const answer = await session.request(initialize(server.ws, meta));
          assert.equal(answer.result, undefined, JSON.stringify(answer));
          assert.match(answer.error?.message ?? "", /serves only the agent that started it/);
          await session.closed;
        }
        const session = await connectSocket(server.socketPath);
        const init = await session.request(initialize(server.ws, { "crow/secret": SECRET }));
        assert.ok(init.result, JSON.stringify(init));
        session.notify({ method: "notifications/initialized" });
        const ran = await session.request({
          id: 2,
          method: "tools/call",
          params: { name: "terminal", arguments: { command: "echo with-the-secret" } },
        });
        assert.match(text(ran), /with-the-secret/);
        session.close();
      } finally {
        await stop(server);
      }
    });

    test("no sandbox shows the socket's directory, even one whose policy makes its parent writable", async () => {
      const server = await start(uid);
      try {
        const session = await connectSocket(server.socketPath);
        const policy = { mode: "workspace-write", writable: [server.base], readOnly: [], network: false };
        const init = await session.request(initialize(server.ws, { "crow/secret": SECRET, "crow/sandbox": policy }));
        assert.ok(init.result, JSON.stringify(init));
        session.notify({ method: "notifications/initialized" });
        const dir = path.dirname(server.socketPath);
        const ran = await session.request({
          id: 2,
          method: "tools/call",
          params: {
            name: "terminal",
            arguments: {
              command: `ls -A ${dir}; [ -S ${server.socketPath} ] && echo SOCKET-VISIBLE || echo NO-SOCKET; touch ${server.base}/writable && echo PARENT-WRITABLE`,
            },
          },
        });
        const result = text(ran);
        assert.match(result, /NO-SOCKET/, result);
        assert.doesNotMatch(result, /mcp\.sock|SOCKET-VISIBLE/);
        assert.match(result, /PARENT-WRITABLE/, "the rest of the writable root stays writable");
        // A later call that sends its policy again (as the agent does) keeps the wall.
        const again = await session.request({
          id: 3,
          method: "tools/call",
          params: {
            name: "terminal",
            arguments: { command: `ls -A ${dir} | wc -l` },
            _meta: { "crow/sandbox": policy },
          },
        });
        assert.match(text(again), /^0$/m, text(again));
        session.close();
      } finally {
        await stop(server);
      }
    });
  });
}
