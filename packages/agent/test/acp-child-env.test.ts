import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

const KEY = "sk-acp-provider-key-8c1d2e";
const PROBE = path.join(import.meta.dirname, "fixtures", "env-mcp-server.mjs");

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

/** A SearXNG look-alike on 127.0.0.1 that records the queries it gets. */
function startSearxng(): Promise<{ url: string; queries: string[]; close: () => Promise<void> }> {
  const queries: string[] = [];
  const server = http.createServer((req, res) => {
    const q = new URL(req.url ?? "/", "http://x").searchParams.get("q") ?? "";
    queries.push(q);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ query: q, results: [{ url: "https://example.org/k", title: "Kestrel page", content: "k" }] }),
    );
  });
  return new Promise((resolve) => {
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}`,
        queries,
        close: () => new Promise((done) => server.close(() => done())),
      });
    });
  });
}

describe("crow acp: child processes do not get Crow's secrets", () => {
  let searxng: Awaited<ReturnType<typeof startSearxng>> | undefined;
  const fx = useAcpFixture({
    agent: { env: { OPENAI_API_KEY: KEY, REAL_ENV_TOKEN: "ghp-real-environment" } },
    async prepare({ crowHome }) {
      searxng = await startSearxng();
      await writeFile(
        path.join(crowHome, ".env"),
        [`SEARXNG_URL=${searxng.url}`, "DOTENV_ONLY=dotenv-only-value", "GH_TOKEN=ghp-allowed-from-dotenv"].join("\n"),
      );
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "child_env:",
          "  allow: [GH_TOKEN]",
          "mcpServers:",
          `  probe: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(PROBE)}], env: { PROBE_OWN: own-value, PROBE_TOKEN: passed-explicitly } }`,
        ].join("\n"),
      );
    },
  });
  after(() => searxng?.close());

  test("the terminal and a stdio MCP server see neither the key nor .env; allowed and own variables pass", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("terminal", { command: 'echo "k=$OPENAI_API_KEY"; env' })
        .toolCall("env_probe", {})
        .toolCall("web_search", { queries: ["common kestrel"] }),
      textReply("checked").expect((req) => {
        const [shell = "", probe = "", search = ""] = toolResults(req);
        assert.match(shell, /^k=$/m);
        for (const hidden of [KEY, "OPENAI_API_KEY", "DOTENV_ONLY", "SEARXNG_URL", "REAL_ENV_TOKEN", "CROW_CHILD"]) {
          assert.ok(!shell.includes(hidden), `the shell sees ${hidden}:\n${shell}`);
        }
        assert.match(shell, /^GH_TOKEN=ghp-allowed-from-dotenv$/m, "child_env.allow lets a .env variable through");
        assert.match(shell, /^PATH=/m);
        const env = JSON.parse(probe) as Record<string, string>;
        assert.equal(env.OPENAI_API_KEY, undefined);
        assert.ok(!Object.values(env).includes(KEY));
        assert.equal(env.DOTENV_ONLY, undefined);
        assert.equal(env.REAL_ENV_TOKEN, undefined);
        assert.equal(env.PROBE_OWN, "own-value", "a server's own env: is passed");
        assert.equal(env.PROBE_TOKEN, "passed-explicitly", "even when its name looks secret");
        assert.equal(env.GH_TOKEN, "ghp-allowed-from-dotenv");
        assert.ok(env.PATH);
        assert.match(search, /Kestrel page/, "web_search still finds SearXNG through .env's SEARXNG_URL");
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "look around")).stopReason, "end_turn");
    assert.deepEqual(searxng?.queries, ["common kestrel"]);
    fx.mock.assertDone();
  });
});
