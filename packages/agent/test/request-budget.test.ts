/**
 * Issue 49: byte budgets for what a task's requests carry, measured on the real requests of `crow run` through the
 * scripted mock, so that a prompt or tool text that grows, or a tool result that picks up a footer again, fails here
 * rather than in a later benchmark. Sizes only, never timings. `npm run bench -- tokens` shows the same task shape
 * side by side with pi (PI_BIN=…); raise a budget only knowingly, with the bench's numbers in the commit message.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type CapturedRequest, reply, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

/**
 * The budgets (bytes as sent, JSON), about 2 % over what was measured when they were set: tools 3 825, guidance
 * 1 039, first request 5 296 with this fixture's workspace. pi 0.73's first request was 5.6 KB in the bench (4 tools,
 * 3.0 KB of them).
 */
const BUDGET = {
  /** The eight built-in tools' definitions. */
  tools: 3_900,
  /** The system prompt's text shared by every session: everything before the session's facts ("Date: …"). */
  guidance: 1_060,
  /** The whole first request of a one-file workspace. */
  firstRequest: 5_400,
  /**
   * What one tool round adds to the next request besides the tool's own output: the assistant's call (a read's is
   * the longest, with its path) and the result's frame; 204–233 B when set. The results' own words (no footer on a
   * success) are asserted exactly.
   */
  roundOverhead: 250,
};

/** A 40-line source file like the ones the bench's task reads. */
const SOURCE = Array.from({ length: 40 }, (_, i) => `export const value${i} = ${i} * 2; // line ${i + 1}`).join("\n");

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

describe("request byte budgets", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("the first request, its tools and its guidance stay within budget; tool rounds add their output and little else", async () => {
    const file = await fx.ws.write("src/values.ts", `${SOURCE}\n`);
    fx.mock.script(
      reply().toolCall("read", { file_path: file }),
      reply().toolCall("terminal", { command: "echo step 2" }),
      reply().toolCall("terminal", { command: "true" }),
      reply().toolCall("terminal", { command: "(exit 3)" }),
      textReply("done"),
    );
    const run = await runCrow(["Look at the source and tell me what it does."], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(run.code, 0, run.stderr);
    fx.mock.assertDone();
    const requests = fx.mock.requests.slice(-5);
    const [first, afterRead, afterEcho, afterTrue, last] = requests;
    assert.ok(first && afterRead && afterEcho && afterTrue && last);

    const tools = Buffer.byteLength(JSON.stringify(first.body.tools ?? []));
    const system = String(first.body.messages[0]?.content);
    const guidance = Buffer.byteLength(system.slice(0, system.indexOf("\nDate: ")));
    const sizes = `tools ${tools} B, guidance ${guidance} B, first request ${first.bytes} B`;
    assert.ok(tools <= BUDGET.tools, `tool definitions over budget: ${sizes}`);
    assert.ok(guidance > 0 && guidance <= BUDGET.guidance, `system prompt guidance over budget: ${sizes}`);
    assert.ok(first.bytes <= BUDGET.firstRequest, `first request over budget: ${sizes}`);

    // What each result says: a whole-file read is the file as it is; a success is its output alone, a silent one
    // says so, a failure names its exit code.
    assert.deepEqual(toolResults(last), [SOURCE, "step 2", "(no output)", "[Command failed with exit code 3]"]);
    const rounds: Array<[string, CapturedRequest, CapturedRequest, string]> = [
      ["read", first, afterRead, SOURCE],
      ["echo", afterRead, afterEcho, "step 2"],
      ["true", afterEcho, afterTrue, "(no output)"],
      ["(exit 3)", afterTrue, last, "[Command failed with exit code 3]"],
    ];
    const added = rounds.map(
      ([name, before, after, output]) =>
        [name, after.bytes - before.bytes - Buffer.byteLength(JSON.stringify(output))] as const,
    );
    for (const [name, bytes] of added) {
      assert.ok(
        bytes <= BUDGET.roundOverhead,
        `the ${name} round added ${bytes} B besides its output: ${added.join("; ")}`,
      );
    }
  });
});
