/**
 * Signing in over ACP: `crow acp` offers Terminal Auth (the editor runs `crow init` in a terminal), answers
 * session/new with the auth-required error while no usable model is configured (none at all, or a local server that
 * refuses connections), takes up what `crow init` wrote without a restart, and `logout` empties the key init saved.
 * All against the built `crow acp` driven by the SDK client, with a private HOME and the scripted mock model.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { lookup } from "node:dns/promises";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type AuthMethod, methods } from "@agentclientprotocol/sdk";
import {
  type AcpClientOptions,
  type AcpTestClient,
  CROW_BIN,
  closedPort,
  type MockLlm,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { loadConfig, parseDotenv } from "../src/config/index.js";

const KEY = "sk-test-auth-0b1c";

interface RpcError {
  code?: number;
  message?: string;
  data?: { authMethods?: AuthMethod[] };
}

/** Runs the built `crow` with `args` (what a terminal would) and resolves with its exit code and output. */
function runCrow(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CROW_BIN, ...args], {
      env: { PATH: process.env.PATH ?? "", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on("data", (d: Buffer) => {
      out += d.toString();
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out }));
  });
}

describe("crow acp: signing in (Terminal Auth running crow init) and logout", () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  const roots: string[] = [];
  const agents: AcpTestClient[] = [];

  /** A fresh HOME with an empty Crow home: nothing configured. */
  async function freshHome(): Promise<{ HOME: string; CROW_HOME: string }> {
    const home = await mkdtemp(path.join(tmpdir(), "crow-auth-"));
    roots.push(home);
    await mkdir(path.join(home, ".crow"));
    return { HOME: home, CROW_HOME: path.join(home, ".crow") };
  }

  /** `crow acp` with no provider in its environment (only what `home` holds configures it). */
  async function agentIn(home: { HOME: string; CROW_HOME: string }, options: AcpClientOptions = {}) {
    const agent = await spawnAcpAgent({
      ...options,
      env: { ...home, CROW_MODEL: "", OPENAI_BASE_URL: "", ...options.env },
    });
    agents.push(agent);
    return agent;
  }

  const authRequired = (pattern: RegExp) => (error: RpcError) => {
    assert.equal(error.code, -32000, JSON.stringify(error));
    assert.match(error.message ?? "", pattern);
    return true;
  };

  before(async () => {
    mock = await startMockLlm({ models: ["mock-model"] });
    ws = await tempWorkspace();
  });
  after(async () => {
    for (const agent of agents) await agent.close();
    await mock.close();
    await ws.cleanup();
    await Promise.all(roots.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  test("initialize offers the terminal method (crow init) and logout, to clients that can run it", async () => {
    const home = await freshHome();
    const typed = await agentIn(home, { auth: { terminal: true } });
    const [method] = typed.initialize.authMethods ?? [];
    assert.ok(method && "type" in method && method.type === "terminal", JSON.stringify(method));
    assert.equal(method.id, "crow-init");
    assert.deepEqual(method.args, ["init"]);
    assert.deepEqual(typed.initialize.agentCapabilities?.auth?.logout, {});
    // The older spelling (Zed's first one; the ACP registry's verifier sends only it) gets it too, with a command line.
    const legacy = await agentIn(home, { capabilitiesMeta: { "terminal-auth": true } });
    const meta = legacy.initialize.authMethods?.[0]?._meta as { "terminal-auth"?: { args?: string[] } } | undefined;
    assert.equal(meta?.["terminal-auth"]?.args?.at(-1), "init");
    // ACP: "Agents MUST advertise this method only when the client enabled its terminal authentication capability".
    const plain = await agentIn(home);
    assert.deepEqual(plain.initialize.authMethods, []);
  });

  test("unconfigured: session/new is auth-required naming the method; after its crow init, sessions work", async () => {
    const home = await freshHome();
    const agent = await agentIn(home, { auth: { terminal: true } });
    await assert.rejects(agent.newSession(ws.dir), (error: RpcError) => {
      authRequired(/No LLM provider configured.*Sign in with "Set up Crow" \(it runs crow init in a terminal\)/)(error);
      assert.equal(error.data?.authMethods?.[0]?.id, "crow-init");
      return true;
    });
    // A client that asks authenticate before the setup ran hears what is still missing.
    await assert.rejects(
      agent.agent.request(methods.agent.authenticate, { methodId: "crow-init" }),
      authRequired(/No LLM provider configured/),
    );
    // The terminal runs the method as ACP says: the configured `crow acp` with the method's args appended (crow init's
    // own flags stand for what the user types into its wizard).
    const [method] = agent.initialize.authMethods ?? [];
    const args = method && "args" in method ? (method.args ?? []) : [];
    const setup = await runCrow(
      ["acp", ...args, `--provider=mock=${mock.url}`, `--api-key=${KEY}`, "--model=mock-model"],
      home,
    );
    assert.equal(setup.code, 0, setup.out);
    // Without restarting the agent: authenticate confirms, session/new opens, the prompt reaches the model with the key.
    assert.deepEqual(await agent.agent.request(methods.agent.authenticate, { methodId: "crow-init" }), {});
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(textReply("Signed in."));
    assert.equal((await agent.prompt(sessionId, "hello")).stopReason, "end_turn");
    assert.equal(mock.requests.at(-1)?.headers.authorization, `Bearer ${KEY}`);
    mock.assertDone();
  });

  test("two session/new at once after crow init both open, and both sessions stay open", async () => {
    const home = await freshHome();
    const agent = await agentIn(home, { auth: { terminal: true } });
    await assert.rejects(agent.newSession(ws.dir), authRequired(/No LLM provider configured/));
    const setup = await runCrow(["init", `--provider=mock=${mock.url}`, "--model=mock-model"], home);
    assert.equal(setup.code, 0, setup.out);
    const [a, b] = await Promise.all([agent.newSession(ws.dir), agent.newSession(ws.dir)]);
    mock.script(textReply("A."), textReply("B."));
    assert.equal((await agent.prompt(a.sessionId, "a")).stopReason, "end_turn");
    assert.equal((await agent.prompt(b.sessionId, "b")).stopReason, "end_turn");
    mock.assertDone();
  });

  test("a local provider with nothing listening is auth-required (connection refused); once it listens, sessions open", async () => {
    const home = await freshHome();
    const port = await closedPort();
    const config = path.join(home.CROW_HOME, "config.yaml");
    await writeFile(
      config,
      `providers: { local: { base_url: "http://127.0.0.1:${port}/v1" } }\nmodels: { m: { provider: local, model: mock-model } }\n`,
    );
    const agent = await agentIn(home, { auth: { terminal: true } });
    await assert.rejects(
      agent.newSession(ws.dir),
      authRequired(
        new RegExp(`http://127\\.0\\.0\\.1:${port}/v1 cannot be reached: nothing is listening .*connection refused`),
      ),
    );
    // The server now runs where config.yaml says (the mock's URL stands for it): the same agent opens sessions.
    await writeFile(
      config,
      `providers: { local: { base_url: "${mock.url}" } }\nmodels: { m: { provider: local, model: mock-model } }\n`,
    );
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(textReply("Up."));
    assert.equal((await agent.prompt(sessionId, "hi")).stopReason, "end_turn");
    mock.assertDone();
  });

  test("a remote provider whose host name does not exist is auth-required, found by a lookup session/new never waits for", async (t) => {
    const host = "api.crow-test.invalid";
    // RFC 6761: .invalid never resolves. A resolver that cannot say so (offline, no DNS at all) cannot show this.
    const code = await lookup(host).then(
      () => "resolved",
      (error: NodeJS.ErrnoException) => error.code,
    );
    if (code !== "ENOTFOUND") {
      t.skip(`this machine's resolver answers ${code} for ${host}, not ENOTFOUND`);
      return;
    }
    const home = await freshHome();
    await writeFile(
      path.join(home.CROW_HOME, "config.yaml"),
      `providers: { remote: { base_url: "https://${host}/v1", api_key: k } }\nmodels: { m: { provider: remote, model: x } }\n`,
    );
    const agent = await agentIn(home, { auth: { terminal: true } });
    // The lookup started at initialize; a session/new before its answer opens (it does not wait), later ones are refused.
    const opened: string[] = [];
    let refused: RpcError | undefined;
    for (let attempt = 0; attempt < 100 && !refused; attempt++) {
      refused = await agent.newSession(ws.dir).then(
        ({ sessionId }) => {
          opened.push(sessionId);
          return undefined;
        },
        (error: RpcError) => error,
      );
    }
    const unreachable =
      /https:\/\/api\.crow-test\.invalid\/v1 cannot be reached: the host name .* does not exist \(DNS\)/;
    assert.ok(refused, "session/new was refused once the lookup answered");
    authRequired(unreachable)(refused);
    // With no session open the configuration is read again before answering: the host still does not exist.
    for (const sessionId of opened) await agent.agent.request(methods.agent.session.close, { sessionId });
    await assert.rejects(agent.newSession(ws.dir), authRequired(unreachable));
  });

  test("logout empties the key crow init saved and says so; config.yaml and the other settings stay", async () => {
    const home = await freshHome();
    const init = await runCrow(
      [
        "init",
        `--provider=mock=${mock.url}`,
        `--api-key=${KEY}`,
        "--model=mock-model",
        "--searxng=http://127.0.0.1:9/",
      ],
      home,
    );
    assert.equal(init.code, 0, init.out);
    const yaml = await readFile(path.join(home.CROW_HOME, "config.yaml"), "utf8");
    const agent = await agentIn(home, { auth: { terminal: true } });
    const { sessionId } = await agent.newSession(ws.dir);
    mock.script(textReply("Stored."));
    await agent.prompt(sessionId, "keep this");

    const answer = await agent.agent.request(methods.agent.logout, {});
    const said = answer?._meta?.["crow/logout"] as { removed?: string[]; message?: string } | undefined;
    assert.deepEqual(said?.removed, ["MOCK_API_KEY"]);
    assert.match(said?.message ?? "", /^Removed MOCK_API_KEY from .*\.env\.$/);
    const dotenv = parseDotenv(await readFile(path.join(home.CROW_HOME, ".env"), "utf8"));
    assert.deepEqual(dotenv, { MOCK_API_KEY: "", SEARXNG_URL: "http://127.0.0.1:9/" });
    assert.equal(await readFile(path.join(home.CROW_HOME, "config.yaml"), "utf8"), yaml, "config.yaml untouched");
    // Signed out: a new session asks to sign in again, naming the emptied key.
    await assert.rejects(
      agent.newSession(ws.dir),
      authRequired(/Provider "mock" has no API key: MOCK_API_KEY is empty/),
    );
    // Nor does a fork of the stored session open; and it leaves no copy behind in the store.
    const stored = async () => (await agent.agent.request(methods.agent.session.list, {})).sessions.length;
    const before = await stored();
    await assert.rejects(
      agent.agent.request("session/fork", { sessionId, cwd: ws.dir, mcpServers: [] }),
      authRequired(/MOCK_API_KEY is empty/),
    );
    assert.equal(await stored(), before);
    // The configuration still loads, with its model and the other settings.
    const config = loadConfig(home);
    assert.equal(config.model, "mock-model");
    assert.equal(config.dotenv.SEARXNG_URL, "http://127.0.0.1:9/");

    // crow logout does the same from a terminal, and says when there is nothing left to remove.
    assert.equal(
      (
        await runCrow(
          ["init", "--force", `--provider=mock=${mock.url}`, `--api-key=${KEY}`, "--model=mock-model"],
          home,
        )
      ).code,
      0,
    );
    const cli = await runCrow(["logout"], home);
    assert.equal(cli.code, 0, cli.out);
    assert.match(cli.out, /^Removed MOCK_API_KEY from ~\/\.crow\/\.env\.$/m);
    assert.match((await runCrow(["logout"], home)).out, /^No saved API key to remove in ~\/\.crow\/\.env\.$/m);
  });
});
