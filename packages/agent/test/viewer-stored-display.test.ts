/**
 * The session viewer shows an edit as the diff stored with its result (migration 0007): the whole file before and
 * after, as the live session showed it, not the call's old_string → new_string. The session is made by the built
 * `crow acp` editing through crow-mcp; the page is the viewer's, read over HTTP. (Rows stored before the migration
 * keep their argument diffs: viewer-server.test.ts's fixtures are stored without displays.)
 */
import assert from "node:assert/strict";
import path from "node:path";
import { describe, test } from "node:test";
import { openStore } from "@crow/core";
import { reply, textReply, useAcpFixture } from "@crow/testkit";
import { startViewer } from "../src/viewer/server.js";

describe("crow sessions serve: an edit shows the diff the live session showed", () => {
  const fx = useAcpFixture();

  test("the session page shows the stored whole-file diff of an edit", async () => {
    const file = fx.ws.path("poem.txt");
    await fx.ws.write("poem.txt", "roses are red\nviolets are blue\nsugar is sweet\n");
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("edit", { file_path: file, old_string: "blue", new_string: "green" }, { id: "call_e" }),
      textReply("Edited."),
    );
    assert.equal((await fx.agent.prompt(sessionId, "make the violets green")).stopReason, "end_turn");
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    const viewer = await startViewer({ store, token: false });
    try {
      const response = await fetch(`${viewer.url.replace(/\/$/, "")}/s/${sessionId}`);
      assert.equal(response.status, 200);
      const page = await response.text();
      const call = /<details class="tool[^"]*" data-call-id="call_e"[\s\S]*?<\/details>/.exec(page)?.[0] ?? "";
      const diff = /<pre class="diff">([\s\S]*?)<\/pre>/.exec(call)?.[1] ?? "";
      // Whole lines of the file, with the lines around the change: what only the file diff has.
      assert.match(diff, /<span class="d-remove">-violets are blue<\/span>/);
      assert.match(diff, /<span class="d-add">\+violets are green<\/span>/);
      assert.match(diff, /<span class="d-context"> roses are red<\/span>/);
      assert.doesNotMatch(diff, /<span class="d-remove">-blue<\/span>/);
      // Shown once: the result's text keeps its first lines, not the diff it repeats for the model.
      assert.equal(call.match(/-violets are blue/g)?.length, 1, call);
      assert.match(call, /<pre class="result">Successfully edited [^<]*poem\.txt\nReplaced 1 occurrence[^<]*<\/pre>/);
    } finally {
      await viewer.close();
      await store.close();
    }
  });

  test("a terminal command that exited 127 is badged 'exit 127', not a green 'ok'", async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("terminal", { command: "no-such-command-crow" }, { id: "call_t" }),
      textReply("It is not installed."),
    );
    assert.equal((await fx.agent.prompt(sessionId, "run it")).stopReason, "end_turn");
    const store = await openStore(path.join(fx.crowHome, "crow.db"));
    const viewer = await startViewer({ store, token: false });
    try {
      const page = await (await fetch(`${viewer.url.replace(/\/$/, "")}/s/${sessionId}`)).text();
      const call = /<details class="tool[^"]*" data-call-id="call_t"[\s\S]*?<\/details>/.exec(page)?.[0] ?? "";
      assert.match(call, /^<details class="tool status-error"/);
      assert.match(call, /<span class="badge error">exit 127<\/span>/);
      assert.doesNotMatch(call, /badge ok/);
    } finally {
      await viewer.close();
      await store.close();
    }
  });
});
