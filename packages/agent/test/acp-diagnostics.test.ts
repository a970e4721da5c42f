/**
 * The built `crow acp` with a scripted model and the real typescript-language-server (the repository's dev dependency,
 * on PATH): an edit that breaks a caller ends its tool call with the error in the call's content, after the diff, and
 * in the update's `_meta["crow/diagnostics"]`.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import type { SessionUpdate } from "@agentclientprotocol/sdk";
import { REPO_ROOT, reply, textReply, useAcpFixture } from "@crow/testkit";

const BIN = path.join(REPO_ROOT, "node_modules", ".bin");

describe("crow acp: diagnostics in the tool call's content", () => {
  const fx = useAcpFixture({
    agent: {
      // CROW_LSP "" unsets the runner's off; patient waits: this is about what is shown, not how fast.
      env: {
        CROW_LSP: "",
        CROW_LSP_WAIT: "90",
        CROW_LSP_START_WAIT: "120",
        PATH: `${BIN}${path.delimiter}${process.env.PATH}`,
      },
    },
  });

  test("an edit that breaks a caller: the diff, then the text with the error; _meta carries it as data", async () => {
    await fx.ws.write("a.ts", "export function half(n: number): number {\n  return n / 2;\n}\n");
    await fx.ws.write("b.ts", 'import { half } from "./a";\n\nexport const h: number = half(4);\n');
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("read", { file_path: fx.ws.path("b.ts") }),
      reply().toolCall(
        "edit",
        { file_path: fx.ws.path("a.ts"), old_string: "half(n: number): number", new_string: "half(n: number): string" },
        { id: "call_break" },
      ),
      textReply("Changed it."),
    );
    const turn = await fx.agent.prompt(sessionId, "make half return a string");
    assert.equal(turn.stopReason, "end_turn");
    const finished = turn.updates.find(
      (u): u is Extract<SessionUpdate, { sessionUpdate: "tool_call_update" }> =>
        u.sessionUpdate === "tool_call_update" &&
        u.status === "completed" &&
        (u.content ?? []).some((c) => c.type === "diff"),
    );
    assert.ok(finished, JSON.stringify(turn.updates));
    const content = finished.content ?? [];
    assert.equal(content[0]?.type, "diff");
    const text = content
      .map((c) => (c.type === "content" && c.content.type === "text" ? c.content.text : ""))
      .join("\n");
    assert.match(text, /Diagnostics \(typescript\) this change introduced: 2 errors\n/);
    assert.match(text, /a\.ts:2:3 error TS2322: Type 'number' is not assignable to type 'string'\./);
    assert.match(text, /b\.ts:3:14 error TS2322: Type 'string' is not assignable to type 'number'\./);
    const meta = finished._meta?.["crow/diagnostics"] as { added: Array<{ path: string; line: number }> } | undefined;
    assert.deepEqual(meta?.added.map((d) => [path.basename(d.path), d.line]).sort(), [
      ["a.ts", 2],
      ["b.ts", 3],
    ]);
    fx.mock.assertDone();
  });
});
