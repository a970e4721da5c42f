/**
 * Issue 49, deferred tools: with an MCP server of 60 tools configured, a request carries Crow's own tools whole and
 * the 60 as names with one-line summaries in `find_tools`; a tool the model loads joins the end of the list (what
 * came before stays byte-identical) and runs; a resumed session (`crow run -s`, a new process) offers the same list.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { type CapturedRequest, reply, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

const MANY = path.join(import.meta.dirname, "fixtures", "many-tools-mcp-server.mjs");

const SERVER = `mcpServers:\n  many: { command: ${JSON.stringify(process.execPath)}, args: [${JSON.stringify(MANY)}] }\n`;

const names = (request: CapturedRequest | undefined) => (request?.body.tools ?? []).map((t) => t.function.name);

function sessionIdOf(stdout: string): string {
  const first = JSON.parse(stdout.trim().split("\n")[0] ?? "{}") as { sessionId?: string };
  assert.equal(typeof first.sessionId, "string", stdout);
  return first.sessionId ?? "";
}

describe("deferred tools", { timeout: 120_000 }, () => {
  const fx = useRunFixture();
  before(() => writeFile(path.join(fx.home.dir, "config.yaml"), SERVER));

  test("60 MCP tools are summarised in find_tools; one is loaded on demand, runs, and stays loaded after a restart", async () => {
    fx.mock.script(
      reply().toolCall("find_tools", { query: "weather" }),
      reply().toolCall("weather_forecast", { city: "Lisbon" }),
      textReply("Sunny in Lisbon."),
    );
    const first = await runCrow(["--json", "what is the weather in Lisbon?"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(first.code, 0, first.stderr);
    const id = sessionIdOf(first.stdout);
    fx.mock.script(textReply("Still sunny."));
    const second = await runCrow(["--json", "-s", id, "and now?"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(second.code, 0, second.stderr);
    fx.mock.assertDone();

    const [before, loaded, ran, resumed] = fx.mock.requests.slice(-4);
    // Before the load: Crow's own tools whole, none of the 60, and find_tools naming each with its summary.
    const offered = names(before);
    for (const own of ["terminal", "read", "edit", "write", "find_tools"]) assert.ok(offered.includes(own), own);
    assert.ok(!offered.some((n) => /^tool_\d\d$|^weather_forecast$/.test(n)), offered.join(", "));
    const finder = before?.body.tools?.find((t) => t.function.name === "find_tools")?.function.description ?? "";
    assert.match(finder, /^- weather_forecast: Gives the weather forecast for a city\.$/m);
    assert.match(finder, /^- tool_59: Does task number 59 of the inventory system\.$/m);
    assert.equal(finder.match(/^- /gm)?.length, 60);
    // The whole 60 would have been far bigger than their summaries.
    assert.ok((before?.bytes ?? 0) < 20_000, `first request ${before?.bytes} B`);

    // The load: the tool joins the end of the list, what came before is byte-identical.
    const result = loaded?.body.messages.at(-1);
    assert.equal(result?.role, "tool");
    assert.match(String(result?.content), /^Loaded weather_forecast/);
    assert.deepEqual(names(loaded), [...offered, "weather_forecast"]);
    assert.deepEqual(loaded?.body.tools?.slice(0, offered.length), before?.body.tools);
    const schema = JSON.stringify(loaded?.body.tools?.at(-1)?.function.parameters);
    assert.match(schema, /"city"/);

    // The loaded tool ran on its server.
    assert.equal(String(ran?.body.messages.at(-1)?.content), 'weather_forecast ran with {"city":"Lisbon"}');
    assert.deepEqual(ran?.body.tools, loaded?.body.tools);

    // A new process resuming the session offers the very same list.
    assert.equal(JSON.stringify(resumed?.body.tools), JSON.stringify(ran?.body.tools));
  });

  test("a query that matches nothing is an error the model can act on", async () => {
    fx.mock.script(
      reply().toolCall("find_tools", { query: "spaceship" }),
      textReply("none").expect((request) => {
        const result = String(request.body.messages.at(-1)?.content);
        assert.match(result, /no tool to load matches "spaceship"/);
        assert.ok(!names(request).includes("weather_forecast"));
      }),
    );
    const run = await runCrow(["find a spaceship tool"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    fx.mock.assertDone();
  });

  test("defer_tools: false offers all 60 in every request, and no find_tools", async () => {
    await writeFile(path.join(fx.home.dir, "config.yaml"), `defer_tools: false\n${SERVER}`);
    fx.mock.script(textReply("all there"));
    const run = await runCrow(["hi"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    fx.mock.assertDone();
    const offered = names(fx.mock.requests.at(-1));
    assert.ok(offered.includes("weather_forecast") && offered.includes("tool_59") && offered.includes("terminal"));
    assert.ok(!offered.includes("find_tools"));
  });
});
