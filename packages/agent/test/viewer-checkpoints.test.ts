/**
 * The viewer marks checkpoints on the timeline: under the user message of a turn that changed the workspace, the
 * files it changed and the diff read from the shadow repository (a session made through the SDK, real git).
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type Crow, createLlmClient, createRuntime, type ExtensionAPI } from "@crow/core";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { type RunningViewer, startViewer } from "../src/viewer/server.js";

const quiet = { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

function putTool(crow: ExtensionAPI): void {
  crow.registerTool({
    name: "put",
    description: "write a file",
    kind: "edit",
    parameters: crow.z.object({ path: crow.z.string(), text: crow.z.string() }),
    execute: async ({ path: file, text }) => {
      await writeFile(file, text);
      return "written";
    },
  });
}

describe("viewer: checkpoint marks on the timeline", () => {
  let mock: MockLlm;
  let dir: string;
  let crow: Crow;
  let viewer: RunningViewer | undefined;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-viewer-cp-"));
    crow = await createRuntime({
      llm: createLlmClient({ baseURL: mock.url, retry: { maxRetries: 0 } }),
      model: "mock-model",
      store: path.join(dir, "crow.db"),
      home: dir,
      systemPrompt: "test",
      logger: quiet,
      extensions: [putTool],
    });
  });
  after(async () => {
    await viewer?.close();
    await crow.close();
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  });

  test("a turn's files and diff under its message; without the shadow repository, the files only", async () => {
    const ws = path.join(dir, "ws");
    await mkdir(ws);
    await writeFile(path.join(ws, "greeting.txt"), "hello\n");
    const session = await crow.newSession({ cwd: ws });
    mock.script(
      textReply("just talk"),
      reply().toolCall("put", { path: path.join(ws, "greeting.txt"), text: "hello, world\n" }),
      textReply("changed"),
    );
    await session.prompt("say something").result;
    await session.prompt("change the greeting").result;
    const store = crow.store;
    assert.ok(store);

    viewer = await startViewer({ store, checkpointsHome: dir, token: false });
    const page = await (await fetch(new URL(`/s/${session.id}`, viewer.url))).text();
    const marks = page.match(/class="checkpoint"/g) ?? [];
    assert.equal(marks.length, 1, "only the turn that changed something has a checkpoint");
    assert.match(page, /checkpoint · 1 file changed: M greeting\.txt/);
    assert.match(page, /<pre class="diff">[\s\S]*-hello\n\+hello, world/);
    await viewer.close();

    viewer = await startViewer({ store, token: false });
    const bare = await (await fetch(new URL(`/s/${session.id}`, viewer.url))).text();
    assert.match(bare, /<div class="checkpoint">checkpoint · 1 file changed: M greeting\.txt<\/div>/);
    assert.doesNotMatch(bare, /<pre class="diff">/);
  });
});
