/**
 * Extensions loaded by `crow acp` from config.yaml in a temp CROW_HOME: a tool, a slash command, a hook that rewrites
 * the system prompt and a custom ACP method, each exercised over ACP; an extension that throws at load and one that
 * throws in a hook are reported to the client and the turn completes.
 */
import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { chunkText, reply, textReply, useAcpFixture } from "@crow/testkit";

const GOOD = `
export default (crow) => {
  const { z } = crow;
  crow.registerTool({
    name: "shout",
    description: "Upper-cases a text.",
    parameters: z.object({ text: z.string().describe("what to shout") }),
    readOnly: true,
    execute: ({ text }) => text.toUpperCase() + "!",
  });
  crow.registerCommand("greet", {
    description: "Greets someone",
    hint: "name",
    run: (args) => "Hello, " + (args || "stranger") + "! (" + crow.options.flavour + ")",
  });
  crow.on("before_request", (draft) => ({
    ...draft,
    messages: draft.messages.map((m) => (m.role === "system" ? { ...m, content: m.content + "\\nANSWER LIKE A PIRATE." } : m)),
  }));
  crow.registerMethod("_greeter/hello", (params, { crow: runtime }) => {
    if (!params || typeof params.name !== "string") throw new Error("expected {name}");
    return { hello: params.name, live: runtime.session(params.sessionId ?? "") !== undefined };
  });
};
`;

const BROKEN = `export default () => { throw new Error("broken on purpose"); };`;

const HOOKY = `
export default (crow) => {
  crow.on("after_tool_call", () => { throw new Error("hook exploded"); });
};
`;

describe("crow acp: extensions from config.yaml", () => {
  const fx = useAcpFixture({
    async prepare({ crowHome }) {
      await mkdir(path.join(crowHome, "extensions"));
      await writeFile(path.join(crowHome, "extensions", "good.mjs"), GOOD);
      await writeFile(path.join(crowHome, "extensions", "broken.mjs"), BROKEN);
      await writeFile(path.join(crowHome, "extensions", "hooky.mjs"), HOOKY);
      await writeFile(
        path.join(crowHome, "config.yaml"),
        [
          "extensions:",
          "  - module: ./extensions/good.mjs",
          "    options: { flavour: vanilla }",
          "  - ./extensions/broken.mjs",
          "  - ./extensions/hooky.mjs",
          "",
        ].join("\n"),
      );
    },
  });

  test("initialize advertises the extension's method next to _crow/compact", () => {
    const meta = fx.agent.initialize.agentCapabilities?._meta as { crow?: { methods?: string[] } } | undefined;
    assert.ok(meta?.crow?.methods?.includes("_greeter/hello"));
    assert.ok(meta?.crow?.methods?.includes("_crow/compact"));
  });

  test("the slash command is advertised and answers; the failed extension is reported", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const commands = await fx.agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "available_commands_update",
      true,
    );
    assert.equal(commands.sessionUpdate, "available_commands_update");
    const names = commands.sessionUpdate === "available_commands_update" ? commands.availableCommands : [];
    assert.deepEqual(
      names.map((c) => c.name),
      ["compact", "clear", "stop", "help", "rewind", "greet"],
    );
    assert.deepEqual(names.at(-1)?.input, { hint: "name" });
    await fx.agent.waitForUpdate(sessionId, (u) => chunkText([u]).includes("broken on purpose"), true);
    const answer = await fx.agent.prompt(sessionId, "/greet Ann");
    assert.equal(answer.stopReason, "end_turn");
    assert.equal(chunkText(answer.updates), "Hello, Ann! (vanilla)");
    assert.match(chunkText((await fx.agent.prompt(sessionId, "/help")).updates), /\/greet - Greets someone/);
  });

  test("the tool runs in process, the hook rewrites the system prompt, a throwing hook is reported", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply()
        .toolCall("shout", { text: "ahoy" })
        .expect((request) => {
          const shout = request.body.tools?.find((t) => t.function.name === "shout");
          assert.ok(shout, "the extension's tool is offered");
          assert.deepEqual((shout.function.parameters as { required?: string[] }).required, ["text"]);
          assert.ok(
            request.body.tools?.some((t) => t.function.name === "read"),
            "next to the MCP tools",
          );
          assert.match(String(request.body.messages[0]?.content), /ANSWER LIKE A PIRATE\.$/);
        }),
      textReply("Done, matey.").expect((request) => {
        assert.equal(request.body.messages.at(-1)?.content, "AHOY!");
      }),
    );
    const result = await fx.agent.prompt(sessionId, "Shout ahoy");
    assert.equal(result.stopReason, "end_turn");
    fx.mock.assertDone();
    const done = result.updates.find((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
    assert.ok(done, "the tool call completed");
    assert.match(chunkText(result.updates), /hooky\.mjs" failed at after_tool_call: hook exploded/);
    assert.match(chunkText(result.updates), /Done, matey\./);
  });

  test("the custom method answers over ACP, errors are JSON-RPC errors", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const answer = (await fx.agent.agent.request("_greeter/hello", { name: "Crow", sessionId })) as {
      hello: string;
      live: boolean;
    };
    assert.deepEqual(answer, { hello: "Crow", live: true });
    await assert.rejects(fx.agent.agent.request("_greeter/hello", {}), /expected \{name\}/);
    await assert.rejects(fx.agent.agent.request("_nobody/nothing", {}), /not found/i);
  });
});
