// Crow over the network from the other side: `crow run --connect` against a `crow acp --listen`, and one session
// moving between two `crow acp --listen` processes that share a PostgreSQL store (another host, in real life).
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import {
  connectRemote,
  findPostgresBin,
  type ListeningAgent,
  type MockLlm,
  type PostgresServer,
  reply,
  startListeningAgent,
  startMockLlm,
  startPostgres,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { listenFixture } from "./listen-helpers.js";
import { runCrow, runEnv } from "./run-helpers.js";

describe("crow run --connect", () => {
  const f = listenFixture();

  // The client's own machine has no model configured: everything is the server's.
  const clientEnv = (extra: Record<string, string | undefined>) =>
    runEnv("http://127.0.0.1:9/v1", f.home, { OPENAI_BASE_URL: undefined, CROW_MODEL: undefined, ...extra });

  for (const scheme of ["ws", "http"]) {
    test(`${scheme}://: a prompt with a tool round runs on the server and the answer shows here`, async () => {
      const url = f.server.url.replace(/^http/, scheme);
      f.mock.script(
        reply().toolCall("terminal", { command: `echo remote-${scheme} > ran-${scheme}.txt` }),
        textReply(`done over ${scheme}`),
      );
      const run = await runCrow(["--connect", url, "-c", f.ws.dir, "run it"], {
        env: clientEnv({ CROW_ACP_TOKEN: f.server.token }),
      });
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stdout, new RegExp(`done over ${scheme}`));
      assert.equal((await f.ws.read(`ran-${scheme}.txt`)).trim(), `remote-${scheme}`);
      f.mock.assertDone();
    });
  }

  test("the token from --token-file; a wrong one is refused with the server's reason", async () => {
    const file = path.join(f.home, "token");
    await writeFile(file, `${f.server.token}\n`);
    f.mock.script(textReply("with the file"));
    const ok = await runCrow(["--connect", f.server.url, "--token-file", file, "-c", f.ws.dir, "hi"], {
      env: clientEnv({}),
    });
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /with the file/);

    const wrong = await runCrow(["--connect", f.server.url.replace(/^http/, "ws"), "-c", f.ws.dir, "hi"], {
      env: clientEnv({ CROW_ACP_TOKEN: "not-the-token" }),
    });
    assert.notEqual(wrong.code, 0);
    assert.match(wrong.stderr, /401.*Authorization: Bearer/s);

    const none = await runCrow(["--connect", f.server.url, "-c", f.ws.dir, "hi"], { env: clientEnv({}) });
    assert.equal(none.code, 2);
    assert.match(none.stderr, /--token-file FILE, or set CROW_ACP_TOKEN/);
    f.mock.assertDone();
  });
});

describe("crow acp --listen: a session moves between two servers sharing PostgreSQL", {
  skip: findPostgresBin() ? undefined : "PostgreSQL is not installed",
}, () => {
  let pg: PostgresServer;
  let mock: MockLlm;
  let ws: TempWorkspace;
  let homes: string[];
  let servers: ListeningAgent[];
  before(async () => {
    pg = await startPostgres();
    const db = await pg.createDatabase();
    mock = await startMockLlm();
    ws = await tempWorkspace();
    homes = await Promise.all([1, 2].map(() => mkdtemp(path.join(tmpdir(), "crow-home-"))));
    servers = await Promise.all(
      homes.map((home) =>
        startListeningAgent({ llmUrl: mock.url, env: { HOME: home, CROW_HOME: home, CROW_DB_URI: db } }),
      ),
    );
  });
  after(async () => {
    await Promise.all((servers ?? []).map((s) => s.close()));
    await pg?.stop();
    await mock?.close();
    await ws?.cleanup();
    await Promise.all((homes ?? []).map((h) => rm(h, { recursive: true, force: true })));
  });

  test("opened on the first, loaded and continued on the second", async () => {
    const [first, second] = servers as [ListeningAgent, ListeningAgent];
    const a = await connectRemote(first, "ws");
    const { sessionId } = await a.newSession(ws.dir);
    mock.script(textReply("Hello from the first host."));
    await a.prompt(sessionId, "on the first host");
    await a.close();

    const b = await connectRemote(second, "http");
    await b.agent.request(methods.agent.session.load, { sessionId, cwd: ws.dir, mcpServers: [] });
    const replayed = b
      .updates(sessionId)
      .map((u) => (u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""))
      .join("");
    assert.match(replayed, /Hello from the first host\./);
    mock.script(textReply("And from the second."));
    assert.equal((await b.prompt(sessionId, "on the second host")).stopReason, "end_turn");
    await b.close();
    mock.assertDone();
  });
});
