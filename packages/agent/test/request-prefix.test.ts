/**
 * Issue 49: what every request resends. The prefix (system prompt + tool list) is byte-identical across the turns of
 * a session and across a process restart (`crow run -s`), so providers' prefix caches hit; the session's facts come
 * after the guidance common to all sessions; the prompt version `full` brings the fuller tool texts along.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { builtinPromptVersion } from "@crow/core";
import { type CapturedRequest, CROW_BIN, reply, textReply } from "@crow/testkit";
import { runCrow, runProcess, useRunFixture } from "./run-helpers.js";

const prefix = (request: CapturedRequest) =>
  JSON.stringify({ system: request.body.messages[0], tools: request.body.tools });

function sessionIdOf(stdout: string): string {
  const first = JSON.parse(stdout.trim().split("\n")[0] ?? "{}") as { type?: string; sessionId?: string };
  assert.equal(first.type, "session");
  assert.equal(typeof first.sessionId, "string");
  return first.sessionId ?? "";
}

describe("the request prefix", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("is byte-identical across turns and across a restart; the session's facts come after the guidance", async () => {
    fx.mock.script(reply().toolCall("terminal", { command: "echo one" }), textReply("first done"));
    const first = await runCrow(["--json", "go"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(first.code, 0, first.stderr);
    const id = sessionIdOf(first.stdout);
    // A new process continues the session.
    fx.mock.script(reply().toolCall("terminal", { command: "echo two" }), textReply("second done"));
    const second = await runCrow(["--json", "-s", id, "again"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(second.code, 0, second.stderr);
    fx.mock.assertDone();
    const requests = fx.mock.requests.slice(-4);
    assert.equal(requests.length, 4);
    const expected = prefix(requests[0] as CapturedRequest);
    for (const request of requests) assert.equal(prefix(request), expected);
    const system = String(requests[0]?.body.messages[0]?.content);
    // The date and the workspace follow the text every session shares.
    assert.ok(system.indexOf("Date: ") > system.indexOf("Be concise"), system);
    assert.ok(system.indexOf(`Workspace: ${fx.ws.dir}`) > system.indexOf("Be concise"), system);
  });

  test("cached tokens a provider reports are recorded; crow sessions shows tokens per task and the cached share", async () => {
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo cached" }).usage(1000, 10, { cached: 800 }),
      textReply("done").usage(1400, 90, { cached: 1000 }),
    );
    const run = await runCrow(["--json", "cache me"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    fx.mock.assertDone();
    const id = sessionIdOf(run.stdout);
    const listed = await runProcess(process.execPath, [CROW_BIN, "sessions", "list", "--json"], { env: fx.env });
    assert.equal(listed.code, 0, listed.stderr);
    const entry = (JSON.parse(listed.stdout) as Array<{ id: string; usage: unknown }>).find((s) => s.id === id);
    assert.deepEqual(entry?.usage, {
      prompts: 1,
      requests: 2,
      promptTokens: 2400,
      completionTokens: 100,
      cachedTokens: 1800,
    });
    const table = await runProcess(process.execPath, [CROW_BIN, "sessions", "list"], { env: fx.env });
    assert.match(table.stdout, new RegExp(`^${id} .* 2\\.5k tokens/task, 75% cached `, "m"), table.stdout);
  });

  test("the prompt version `full` has the fuller tool texts; the lean default does not", async () => {
    fx.mock.script(textReply("lean"));
    assert.equal((await runCrow(["hi"], { env: fx.env, cwd: fx.ws.dir })).code, 0);
    const home = fx.env.CROW_HOME ?? "";
    await mkdir(path.join(home, "prompts"), { recursive: true });
    await writeFile(path.join(home, "prompts", "system_prompt.njk"), builtinPromptVersion("full") ?? "");
    try {
      fx.mock.script(textReply("full"));
      assert.equal((await runCrow(["hi"], { env: fx.env, cwd: fx.ws.dir })).code, 0);
    } finally {
      await writeFile(path.join(home, "prompts", "system_prompt.njk"), builtinPromptVersion("lean") ?? "");
    }
    fx.mock.assertDone();
    const [lean, full] = fx.mock.requests.slice(-2);
    const terminalOf = (r: CapturedRequest | undefined) =>
      r?.body.tools?.find((t) => t.function.name === "terminal")?.function.description ?? "";
    assert.match(terminalOf(full), /State persists between calls/);
    assert.doesNotMatch(terminalOf(lean), /State persists between calls/);
    assert.match(String(full?.body.messages[0]?.content), /<WORKING>/);
    assert.ok((full?.bytes ?? 0) > 2 * (lean?.bytes ?? 0), `full ${full?.bytes} B, lean ${lean?.bytes} B`);
  });
});
