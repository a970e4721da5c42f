/**
 * ACP `additionalDirectories` through a spawned `crow acp` with a scripted model: accepted on session/new, load,
 * resume and fork, stored and reported by session/list, and part of the workspace (named in the system prompt,
 * writable in the sandbox, covered by relative permission patterns, searched by relative @-mentions). Extra roots
 * live under /var/tmp: outside the workspace and outside the sandbox's private /tmp, so only being a root makes them
 * writable.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

type Req = { body: { messages: Array<{ role: string; content?: unknown }> } };
const systemPrompt = (req: Req) => String(req.body.messages[0]?.content ?? "");
const toolResults = (req: Req) => req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));

describe("crow acp: additional directories join the session's workspace", () => {
  const fx = useAcpFixture({
    async prepare({ crowHome }) {
      // A relative pattern speaks of every workspace root.
      await writeFile(path.join(crowHome, "config.yaml"), "permissions:\n  deny: ['write(secret/**)']\n");
    },
  });
  let extra: string;
  let second: string;
  before(async () => {
    extra = await mkdtemp(path.join("/var/tmp", "crow-extra-"));
    second = await mkdtemp(path.join("/var/tmp", "crow-extra-two-"));
    await writeFile(path.join(extra, "notes.md"), "NOTES-IN-THE-EXTRA-ROOT\n");
  });
  after(async () => {
    await rm(extra, { recursive: true, force: true });
    await rm(second, { recursive: true, force: true });
  });

  const newSession = (additionalDirectories?: string[]) =>
    fx.agent.agent.request(methods.agent.session.new, {
      cwd: fx.ws.dir,
      mcpServers: [],
      ...(additionalDirectories ? { additionalDirectories } : {}),
    });
  const listed = async (sessionId: string) =>
    (await fx.agent.agent.request(methods.agent.session.list, {})).sessions.find((s) => s.sessionId === sessionId);
  /** One exchange, so that session/list offers the session (a never-prompted one is left out). */
  const converse = async (sessionId: string) => {
    fx.mock.script(textReply("hello"));
    await fx.agent.prompt(sessionId, "hello");
  };

  test("the capability is advertised", () => {
    assert.deepEqual(fx.agent.initialize.agentCapabilities?.sessionCapabilities?.additionalDirectories, {});
  });

  test("without it the extra directory is outside: a command cannot write there", async () => {
    const { sessionId } = await newSession();
    fx.mock.script(
      reply().toolCall("terminal", { command: `echo no > ${extra}/outside.txt` }),
      reply().toolCall("write", { file_path: path.join(extra, "outside.txt"), content: "no" }),
      textReply("ok").expect((req) => {
        assert.doesNotMatch(systemPrompt(req), /Additional directories/);
        const [terminal, write] = toolResults(req);
        assert.match(terminal ?? "", /Read-only file system/);
        assert.match(write ?? "", /sandbox/i);
      }),
    );
    await fx.agent.prompt(sessionId, "write there");
    fx.mock.assertDone();
    assert.equal(existsSync(path.join(extra, "outside.txt")), false);
  });

  test("new: stored, listed, named in the system prompt, writable, @-mentions resolve there, rules apply there", async () => {
    const { sessionId } = await newSession([extra]);
    fx.mock.script(
      reply().toolCall("terminal", { command: `echo made > ${extra}/made.txt` }),
      reply().toolCall("write", { file_path: path.join(extra, "written.txt"), content: "by the write tool\n" }),
      reply().toolCall("write", { file_path: path.join(extra, "secret", "key.txt"), content: "k" }),
      textReply("ok").expect((req) => {
        const prompt = systemPrompt(req);
        assert.match(prompt, /Additional directories, also part of the workspace/);
        assert.ok(prompt.includes(`- ${extra}`), prompt);
        // The relative link named nothing in the cwd: it was found in the extra root and inlined.
        const user = JSON.stringify(req.body.messages.find((m) => m.role === "user")?.content);
        assert.match(user, /NOTES-IN-THE-EXTRA-ROOT/);
        const [made, written, secret] = toolResults(req);
        assert.equal(made, "(no output)", "a success is its output alone");
        assert.doesNotMatch(written ?? "", /sandbox|denied|error/i);
        assert.match(secret ?? "", /permission rule "write\(secret\/\*\*\)"/);
      }),
    );
    const turn = await fx.agent.prompt(sessionId, [
      { type: "text", text: "work in the other root, see" },
      { type: "resource_link", uri: "notes.md", name: "notes.md" },
    ]);
    // Listed once prompted (a never-prompted session is not offered for resuming).
    assert.deepEqual((await listed(sessionId))?.additionalDirectories, [extra]);
    assert.equal(turn.stopReason, "end_turn");
    fx.mock.assertDone();
    assert.equal(await readFile(path.join(extra, "made.txt"), "utf8"), "made\n");
    assert.equal(await readFile(path.join(extra, "written.txt"), "utf8"), "by the write tool\n");
    assert.equal(existsSync(path.join(extra, "secret", "key.txt")), false);
  });

  test("a task's subagent shares them: its prompt names them and the rules apply there", async () => {
    const { sessionId } = await newSession([extra]);
    fx.mock.script(
      reply().toolCall("task", { description: "Child job", prompt: "Write the key." }),
      // The child's requests.
      reply()
        .toolCall("write", { file_path: path.join(extra, "secret", "child.txt"), content: "k" })
        .expect((req) => assert.ok(systemPrompt(req).includes(`- ${extra}`), "the child is told")),
      textReply("child done").expect((req) =>
        assert.match(toolResults(req).at(-1) ?? "", /permission rule "write\(secret\/\*\*\)"/),
      ),
      textReply("parent done"),
    );
    assert.equal((await fx.agent.prompt(sessionId, "delegate")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.equal(existsSync(path.join(extra, "secret", "child.txt")), false);
  });

  test("load and resume: the list given is the session's from then on (omitted: none); fork takes its own", async () => {
    const { sessionId } = await newSession([extra]);
    await converse(sessionId);
    await fx.agent.agent.request(methods.agent.session.close, { sessionId });

    // Loaded again with its list (what session/list reported): still part of the workspace.
    await fx.agent.agent.request(methods.agent.session.load, {
      sessionId,
      cwd: fx.ws.dir,
      mcpServers: [],
      additionalDirectories: [extra],
    });
    assert.deepEqual((await listed(sessionId))?.additionalDirectories, [extra]);
    fx.mock.script(
      reply().toolCall("terminal", { command: `echo again > ${extra}/again.txt` }),
      textReply("ok").expect((req) => assert.ok(systemPrompt(req).includes(`- ${extra}`))),
    );
    await fx.agent.prompt(sessionId, "write again");
    assert.equal(await readFile(path.join(extra, "again.txt"), "utf8"), "again\n");

    // Resumed with another list: that one replaces it, in the store and in what the model is told.
    await fx.agent.agent.request(methods.agent.session.resume, {
      sessionId,
      cwd: fx.ws.dir,
      additionalDirectories: [second],
    });
    assert.deepEqual((await listed(sessionId))?.additionalDirectories, [second]);
    fx.mock.script(
      textReply("ok").expect((req) => {
        assert.ok(systemPrompt(req).includes(`- ${second}`));
        assert.ok(!systemPrompt(req).includes(`- ${extra}`));
      }),
    );
    await fx.agent.prompt(sessionId, "which roots?");

    // A fork with its own list; the source keeps its.
    const fork = await fx.agent.agent.request<{ sessionId: string }>("session/fork", {
      sessionId,
      cwd: fx.ws.dir,
      mcpServers: [],
      additionalDirectories: [extra, second],
    });
    assert.deepEqual((await listed(fork.sessionId))?.additionalDirectories, [extra, second]);
    assert.deepEqual((await listed(sessionId))?.additionalDirectories, [second]);

    // Resumed without a list: ACP says no additional roots are active, and session/list says so.
    await fx.agent.agent.request(methods.agent.session.resume, { sessionId, cwd: fx.ws.dir });
    assert.equal((await listed(sessionId))?.additionalDirectories, undefined);
    fx.mock.script(textReply("ok").expect((req) => assert.doesNotMatch(systemPrompt(req), /Additional directories/)));
    await fx.agent.prompt(sessionId, "and now?");
    fx.mock.assertDone();
  });

  test("a directory that cannot be one is refused with -32602 naming it", async () => {
    const file = await fx.ws.write("plain.txt", "x");
    const missing = path.join(extra, "no-such-dir");
    for (const [dir, reason] of [
      ["relative/dir", /"relative\/dir" is not an absolute path/],
      [missing, /does not exist/],
      [file, /is a file, not a directory/],
    ] as const) {
      await assert.rejects(newSession([dir]), (error: { code?: number; message?: string; data?: unknown }) => {
        assert.equal(error.code, -32602);
        assert.match(`${error.message} ${JSON.stringify(error.data)}`, reason);
        return true;
      });
    }
    // A refused load opens nothing and changes nothing.
    const { sessionId } = await newSession([extra]);
    await converse(sessionId);
    await assert.rejects(
      fx.agent.agent.request(methods.agent.session.load, {
        sessionId,
        cwd: fx.ws.dir,
        mcpServers: [],
        additionalDirectories: [missing],
      }),
      /does not exist/,
    );
    assert.deepEqual((await listed(sessionId))?.additionalDirectories, [extra]);
  });
});
