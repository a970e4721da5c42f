/**
 * Issue 49: old tool results are sent shortened (config.yaml `keep_tool_results`), the stored history keeps them
 * whole, and a resumed session sends exactly what the live one did.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { before, describe, test } from "node:test";
import { CROW_BIN, reply, textReply } from "@crow/testkit";
import { runCrow, runProcess, useRunFixture } from "./run-helpers.js";

/** The n-th command: about 14 000 characters (3000 lines of numbers; each call differs, or the loop guard blocks it). */
const big = (n: number) => `seq 1 3000; echo call ${n}`;

describe("old tool results", { timeout: 120_000 }, () => {
  const fx = useRunFixture();
  before(() => writeFile(path.join(fx.home.dir, "config.yaml"), "keep_tool_results: 1\n"));

  test("all but the most recent are sent shortened once that saves a batch; the store keeps them whole", async () => {
    fx.mock.script(
      reply().toolCall("terminal", { command: big(1) }),
      reply().toolCall("terminal", { command: big(2) }),
      reply().toolCall("terminal", { command: big(3) }),
      reply().toolCall("terminal", { command: big(4) }),
      textReply("counted"),
    );
    const run = await runCrow(["--json", "count"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    const first = JSON.parse(run.stdout.trim().split("\n")[0] ?? "{}") as { sessionId?: string };
    fx.mock.script(textReply("still counted"));
    const resumed = await runCrow(["--json", "-s", first.sessionId ?? "", "again"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(resumed.code, 0, resumed.stderr);
    fx.mock.assertDone();

    const requests = fx.mock.requests.slice(-6);
    const results = (i: number) =>
      (requests[i]?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));
    // Request 4 carries three results: two old ones save less than a batch, so all are whole.
    assert.deepEqual(
      results(3).map((r) => r.length > 13_000),
      [true, true, true],
    );
    // Request 5: three old results save a batch; they are shortened, the latest is whole.
    const fifth = results(4);
    assert.equal(fifth.length, 4);
    for (const old of fifth.slice(0, 3)) {
      assert.ok(old.length < 1_400, `${old.length} characters`);
      assert.match(old, /^1\n2\n3\n/);
      assert.match(old, /characters of this earlier result left out to save context; call the tool again/);
      assert.match(old, /\n3000\ncall \d$/);
    }
    assert.ok((fifth[3]?.length ?? 0) > 13_000);
    // The resumed session sends the same messages before its new prompt.
    const resumedMessages = requests[5]?.body.messages ?? [];
    assert.equal(
      JSON.stringify(resumedMessages.slice(0, (requests[4]?.body.messages.length ?? 0) + 1)),
      JSON.stringify([...(requests[4]?.body.messages ?? []), resumedMessages[requests[4]?.body.messages.length ?? 0]]),
    );
    // The store keeps every result whole.
    const exported = await runProcess(
      process.execPath,
      [CROW_BIN, "sessions", "export", first.sessionId ?? "", "--format", "json"],
      { env: fx.env },
    );
    assert.equal(exported.code, 0, exported.stderr);
    const stored = (JSON.parse(exported.stdout) as { messages: Array<{ message: { role: string; content: unknown } }> })
      .messages;
    const tools = stored.filter((m) => m.message.role === "tool").map((m) => String(m.message.content));
    assert.equal(tools.length, 4);
    for (const whole of tools) assert.ok(whole.length > 13_000, `${whole.length} characters stored`);
  });
});
