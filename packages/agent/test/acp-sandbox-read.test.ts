/**
 * Crow's provider keys stay out of the model's context when the editor lends its fs: a spawned `crow acp` whose client
 * answers `fs/read_text_file`, a scripted model asking to read (and edit) Crow's `.env` directly and through a
 * workspace symlink. With the sandbox on, the agent refuses without asking the editor; with it off, it reads.
 */
import assert from "node:assert/strict";
import { symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

const SECRET = "sk-editor-readguard-secret";

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("crow acp: the editor-side read and edit keep Crow's provider keys hidden", () => {
  const fx = useAcpFixture({
    agent: { fs: true },
    async prepare({ crowHome, ws }) {
      await writeFile(path.join(crowHome, ".env"), `CROW_READGUARD_TOKEN=${SECRET}\n`);
      await symlink(path.join(crowHome, ".env"), ws.path("x"));
      await ws.write("notes.md", "plain notes\n");
    },
  });

  test("with the session's sandbox switched off, the read goes through (the shell could read it too)", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    await fx.agent.agent.request(methods.agent.session.setConfigOption, {
      sessionId,
      configId: "sandbox",
      type: "boolean",
      value: false,
    });
    fx.mock.script(
      reply().toolCall("read", { file_path: fx.ws.path("x") }),
      textReply("ok").expect((req) => assert.match(toolResults(req).at(-1) ?? "", new RegExp(SECRET))),
    );
    await fx.agent.prompt(sessionId, "read it unconfined");
    fx.mock.assertDone();
  });

  test("read of .env, directly or through a workspace symlink, is refused without asking the editor", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const dotenv = path.join(fx.crowHome, ".env");
    const before = fx.agent.fsCalls.length;
    fx.mock.script(
      reply().toolCall("read", { file_path: dotenv }),
      reply().toolCall("read", { file_path: fx.ws.path("x") }),
      reply().toolCall("edit", { file_path: fx.ws.path("x"), old_string: "nothing like this", new_string: "y" }),
      reply().toolCall("read", { file_path: fx.ws.path("notes.md") }),
      textReply("ok").expect((req) => {
        const [direct, linked, edited, notes] = toolResults(req);
        for (const result of [direct, linked, edited]) {
          assert.doesNotMatch(result ?? "", new RegExp(SECRET));
          assert.match(
            result ?? "",
            /one of Crow's own files \(provider keys or session transcripts\) and is hidden from tools/,
          );
        }
        assert.match(linked ?? "", /really .*\.crow\/\.env\)/);
        assert.match(notes ?? "", /plain notes/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "read the keys")).stopReason, "end_turn");
    fx.mock.assertDone();
    const asked = fx.agent.fsCalls.slice(before).join("\n");
    assert.doesNotMatch(asked, /\.env|\/x$/m, "the editor was never asked for the hidden file");
    assert.match(asked, /read .*notes\.md/, "an ordinary file still goes through the editor");
  });
});

describe("crow acp: an AGENTS.md linked to Crow's .env stays out of the system prompt", () => {
  const fx = useAcpFixture({
    async prepare({ crowHome, ws }) {
      await writeFile(path.join(crowHome, ".env"), `CROW_READGUARD_TOKEN=${SECRET}\n`);
      // What a sandboxed `ln -s ~/.crow/.env AGENTS.md` leaves for the next session (or a subagent) to pick up.
      await symlink(path.join(crowHome, ".env"), ws.path("AGENTS.md"));
    },
  });

  test("the next session's prompt says it was left out instead of quoting the keys", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      textReply("ok").expect((req) => {
        const system = JSON.stringify(req.body.messages.filter((m) => m.role === "system"));
        assert.doesNotMatch(system, new RegExp(SECRET));
        assert.match(system, /AGENTS\.md was left out: it is .*\.env, one of Crow's own files/);
      }),
    );
    await fx.agent.prompt(sessionId, "hello");
    fx.mock.assertDone();
  });
});
