/**
 * Threshold compaction in the two setups where it used to never start, end to end through the built binaries:
 * a model from the environment whose window is `CROW_CONTEXT_WINDOW`, and a session continued in a new process
 * (`crow run -s`, `session/load` in a fresh `crow acp`). The scripted model reports 9 000 prompt tokens against a
 * 10 000-token window (threshold 8 000); the next turn must start with a summary request.
 */
import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import {
  type CapturedRequest,
  chunkText,
  type MockLlm,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
  useAcpFixture,
} from "@crow/testkit";
import { runCrow, runEnv, tempHome } from "./run-helpers.js";

/** The summarizer request: no tools, and the transcript in its one user message. */
function isSummaryRequest(request: CapturedRequest): void {
  assert.equal(request.body.tools, undefined, "the summarizer gets no tools");
  assert.match(String(request.body.messages[1]?.content), /FIRST USER MESSAGE/);
}

/** What the model sees after the compaction: first user message, the summary, the new request. */
function sawCompactedHistory(first: string, summary: string, latest: string) {
  return (request: CapturedRequest) => {
    assert.deepEqual(
      request.body.messages.slice(1).map((m) => `${m.role}: ${String(m.content)}`),
      [`user: ${first}`, `assistant: ${summary}`, `user: ${latest}`],
    );
  };
}

describe("crow run -s: the model from the environment, CROW_CONTEXT_WINDOW=10000", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("a session continued in a new process compacts first when its last request crossed 80 % of the window", async () => {
    const env = runEnv(mock.url, home.dir, { CROW_CONTEXT_WINDOW: "10000" });
    mock.script(textReply("Noted: the port is 8080.").usage(9000, 20));
    const first = await runCrow(["-c", ws.dir, "remember: the port is 8080"], { env });
    assert.equal(first.code, 0, first.stderr);
    const id = /Continue with: crow run -s (\S+)/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);

    const summary = "## Summary\nThe user said the port is 8080.";
    mock.script(
      textReply(summary).expect(isSummaryRequest),
      textReply("It is 8080.").expect(sawCompactedHistory("remember: the port is 8080", summary, "which port?")),
    );
    const next = await runCrow(["-c", ws.dir, "-s", id, "which port?"], { env });
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stdout, /It is 8080\./);
    assert.match(`${next.stdout}${next.stderr}`, /Compacted the conversation/);
    mock.assertDone();
  });
});

describe("session/load in a fresh crow acp: context_window in config.yaml", { timeout: 120_000 }, () => {
  const fx = useAcpFixture({
    startAgent: false,
    // Everything from config.yaml: no OPENAI_* and no CROW_MODEL.
    agent: { env: { CROW_MODEL: "", OPENAI_BASE_URL: "" } },
    async prepare({ mock, crowHome }) {
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "providers:",
          `  local: { base_url: "${mock.url}" }`,
          "models:",
          "  mock-model: { provider: local, context_window: 10000 }",
        ].join("\n"),
      );
    },
  });

  test("the editor restarted: the loaded session compacts before its next turn", async () => {
    const firstAgent = await fx.spawn();
    const { sessionId } = await firstAgent.newSession(fx.ws.dir);
    fx.mock.script(textReply("Noted: the port is 8080.").usage(9000, 20));
    await firstAgent.prompt(sessionId, "remember: the port is 8080");
    await firstAgent.close();

    const secondAgent = await fx.spawn();
    await secondAgent.agent.request(methods.agent.session.load, { sessionId, cwd: fx.ws.dir, mcpServers: [] });
    const summary = "## Summary\nThe user said the port is 8080.";
    fx.mock.script(
      textReply(summary).expect(isSummaryRequest),
      textReply("It is 8080.").expect(sawCompactedHistory("remember: the port is 8080", summary, "which port?")),
    );
    const turn = await secondAgent.prompt(sessionId, "which port?");
    assert.equal(turn.stopReason, "end_turn");
    assert.match(chunkText(turn.updates), /Compacted the conversation because the context was getting full/);
    fx.mock.assertDone();
  });
});
