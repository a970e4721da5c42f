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

  test("after a compaction, every checkpoint of the turns it folded is shown, not only the last at a message", async () => {
    await viewer?.close();
    const ws = path.join(dir, "ws-compacted");
    await mkdir(ws);
    const session = await crow.newSession({ cwd: ws });
    for (const name of ["one", "two", "three"]) {
      mock.script(reply().toolCall("put", { path: path.join(ws, `${name}.txt`), text: `${name}\n` }), textReply("ok"));
      await session.prompt(`write ${name}.txt`).result;
    }
    mock.script(textReply("Wrote one, two and three."));
    const compacted = await session.compact();
    assert.ok(compacted.compacted, JSON.stringify(compacted));
    const store = crow.store;
    assert.ok(store);
    viewer = await startViewer({ store, token: false });
    const page = await (await fetch(new URL(`/s/${session.id}`, viewer.url))).text();
    for (const name of ["one", "two", "three"])
      assert.match(page, new RegExp(`checkpoint · 1 file changed: A ${name}\\.txt`));
    assert.equal((page.match(/class="checkpoint"/g) ?? []).length, 3);
    // The folded history is an archive, labelled as a compaction (with its summary), not as a rewind.
    assert.match(page, /<span class="after">after: first message, summary, latest request<\/span>/);
  });

  test("a /rewind is listed as a rewind (what it kept), not as 'cleared'; the page has an icon", async () => {
    await viewer?.close();
    const ws = path.join(dir, "ws-rewound");
    await mkdir(ws);
    const session = await crow.newSession({ cwd: ws });
    mock.script(textReply("first answer"), textReply("second answer"));
    await session.prompt("first").result;
    await session.prompt("second").result;
    const [, second] = await session.rewindPoints();
    assert.ok(second);
    await session.rewind({ seq: second.seq, scope: "conversation" });
    const store = crow.store;
    assert.ok(store);
    viewer = await startViewer({ store, token: false });
    const page = await (await fetch(new URL(`/s/${session.id}`, viewer.url))).text();
    assert.match(page, /<span class="after">rewound: kept the first 2 messages<\/span>/);
    assert.doesNotMatch(page, /<span class="after">cleared/);
    assert.match(page, /<link rel="icon" href="\/favicon\.svg"/);
    for (const icon of ["/favicon.ico", "/favicon.svg"]) {
      const res = await fetch(new URL(icon, viewer.url));
      assert.equal(res.status, 200, icon);
      assert.equal(res.headers.get("content-type"), "image/svg+xml");
      assert.match(await res.text(), /^<svg /);
    }
  });

  test("a /rewind to the first message, then a new prompt: 'rewound to the start', not 'cleared' nor a summary", async () => {
    await viewer?.close();
    const ws = path.join(dir, "ws-rewound-start");
    await mkdir(ws);
    const session = await crow.newSession({ cwd: ws });
    mock.script(textReply("first answer"), textReply("again"));
    await session.prompt("first").result;
    const [first] = await session.rewindPoints();
    assert.ok(first);
    await session.rewind({ seq: first.seq, scope: "conversation" });
    await session.prompt("start over").result;
    const store = crow.store;
    assert.ok(store);
    viewer = await startViewer({ store, token: false });
    const page = await (await fetch(new URL(`/s/${session.id}`, viewer.url))).text();
    assert.match(page, /<span class="after">rewound to the start<\/span>/);
    assert.doesNotMatch(page, /<span class="after">(cleared|after: first message)/);
  });
});
