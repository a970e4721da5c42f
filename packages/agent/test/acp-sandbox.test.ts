/**
 * The sandbox through a spawned `crow acp` with a scripted model, on real bubblewrap (CI installs it): each session's
 * policy comes from its mode, a mode change applies to the next command, and a missing bubblewrap is a notice
 * (sandbox: auto) or a refused session (sandbox: required).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { type PermissionChoice, reply, textReply, useAcpFixture } from "@crow/testkit";

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("crow acp: commands run in the sandbox chosen by the session's mode", () => {
  const answers: PermissionChoice[] = [];
  const fx = useAcpFixture({
    // An editor that takes boolean config options (the Sandbox switch is one).
    agent: { permissions: () => answers.shift() ?? "reject", session: { configOptions: { boolean: {} } } },
    async prepare({ ws }) {
      await ws.write("README.md", "hello\n");
      execFileSync("git", ["init", "-q"], { cwd: ws.dir });
      execFileSync(
        "git",
        ["-c", "user.name=t", "-c", "user.email=t@e", "commit", "-q", "--allow-empty", "-m", "first"],
        {
          cwd: ws.dir,
        },
      );
    },
  });

  async function session(mode: "code" | "ask" | "read-only") {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    if (mode !== "code") await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: mode });
    return sessionId;
  }

  test("code: the workspace is writable; /etc and .git/hooks are not, and the model is told why", async () => {
    const sessionId = await session("code");
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo made > made.txt && cat made.txt" }),
      reply().toolCall("terminal", { command: "echo x > /etc/crow-acp-sandbox" }),
      reply().toolCall("terminal", { command: "echo evil > .git/hooks/pre-commit" }),
      textReply("done").expect((req) => {
        const [made, etc, hook] = toolResults(req);
        assert.equal(made, "made", "a success is its output alone");
        assert.match(etc ?? "", /Read-only file system/);
        assert.match(etc ?? "", /\[Sandbox: writing \/etc\/crow-acp-sandbox was blocked/);
        assert.match(hook ?? "", /Read-only file system/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "go")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.equal(await fx.ws.read("made.txt"), "made\n");
    assert.equal(existsSync("/etc/crow-acp-sandbox"), false);
    assert.equal(existsSync(fx.ws.path(".git/hooks/pre-commit")), false);
  });

  test("read-only: the terminal runs (git log works) but writes nothing; write is still refused", async () => {
    const sessionId = await session("read-only");
    fx.mock.script(
      reply().toolCall("terminal", { command: "git log --oneline" }),
      reply().toolCall("terminal", { command: "echo x > ro.txt; cp README.md copy.md; sed -i s/hello/bye/ README.md" }),
      reply().toolCall("write", { file_path: fx.ws.path("ro.txt"), content: "x" }),
      textReply("read only").expect((req) => {
        const [log, writes, write] = toolResults(req);
        assert.match(log ?? "", /first/);
        assert.doesNotMatch(log ?? "", /Command failed/);
        assert.match(writes ?? "", /Read-only file system/);
        assert.match(writes ?? "", /this session is read-only/);
        assert.match(write ?? "", /read-only mode/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "look")).stopReason, "end_turn");
    fx.mock.assertDone();
    assert.equal(existsSync(fx.ws.path("ro.txt")), false);
    assert.equal(existsSync(fx.ws.path("copy.md")), false);
    assert.equal(await fx.ws.read("README.md"), "hello\n");
  });

  test("read-only: no network (a host loopback listener is unreachable) and host processes are invisible", async () => {
    const listener = createServer((socket) => socket.end("hello from the host\n"));
    await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
    const { port } = listener.address() as { port: number };
    try {
      const sessionId = await session("read-only");
      fx.mock.script(
        reply().toolCall("terminal", {
          command: `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo UNREACHABLE; kill -0 ${process.pid} || echo NO-SUCH-PROCESS`,
        }),
        textReply("ok").expect((req) => {
          const result = toolResults(req).at(-1) ?? "";
          assert.match(result, /UNREACHABLE/);
          assert.doesNotMatch(result, /hello from the host/);
          assert.match(result, /NO-SUCH-PROCESS/);
          assert.match(result, /network is off/);
        }),
      );
      await fx.agent.prompt(sessionId, "probe");
      fx.mock.assertDone();
    } finally {
      listener.close();
    }
  });

  test("a mode change applies to the next command: the shell restarts under the new sandbox and says so", async () => {
    const sessionId = await session("code");
    fx.mock.script(reply().toolCall("terminal", { command: "echo 1 > before.txt" }), textReply("ok"));
    await fx.agent.prompt(sessionId, "write before");
    await fx.agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "read-only" });
    fx.mock.script(
      reply().toolCall("terminal", { command: "echo 2 > after.txt" }),
      textReply("ok").expect((req) => {
        const last = toolResults(req).at(-1) ?? "";
        assert.match(last, /The session's sandbox changed, so a new shell was started/);
        assert.match(last, /Read-only file system/);
      }),
    );
    await fx.agent.prompt(sessionId, "write after");
    fx.mock.assertDone();
    assert.equal(await fx.ws.read("before.txt"), "1\n");
    assert.equal(existsSync(fx.ws.path("after.txt")), false);
  });

  test("ask: a blocked command can run once outside the sandbox with the user's permission, and only once", async () => {
    // Outside /tmp: the sandbox's private /tmp would hide a /tmp directory instead of refusing the write.
    const outside = await mkdtemp(path.join("/var/tmp", "crow-escape-"));
    const target = path.join(outside, "out.txt");
    try {
      const sessionId = await session("ask");
      const asked = fx.agent.permissionRequests.length;
      // The terminal itself (ask mode's question), then the escape for the first command, refused for the second.
      answers.push("allow_always", "allow_once", "reject");
      fx.mock.script(
        reply().toolCall("terminal", { command: `echo once >> ${target}` }),
        reply().toolCall("terminal", { command: `echo again >> ${target}` }),
        textReply("done").expect((req) => {
          const [first, second] = toolResults(req);
          assert.match(first ?? "", /Read-only file system/);
          assert.match(first ?? "", /Ran once outside the sandbox, with the user's permission/);
          // The escape succeeded: its part is the command's output alone (here none).
          assert.match(first ?? "", /Later commands run in the sandbox again\.\]\n\(no output\)$/);
          assert.match(second ?? "", /Read-only file system/);
          assert.doesNotMatch(second ?? "", /Ran once outside/);
        }),
      );
      assert.equal((await fx.agent.prompt(sessionId, "append")).stopReason, "end_turn");
      fx.mock.assertDone();
      assert.equal(await readFile(target, "utf8"), "once\n");
      const questions = fx.agent.permissionRequests.slice(asked);
      assert.equal(questions.length, 3);
      assert.match(JSON.stringify(questions[1]?.request.toolCall.content), /sandbox blocking this command/);
      // Marked, so clients that answer on their own (crow run --yes) leave it to a person; the mode's question is not.
      assert.equal(questions[1]?.request._meta?.["crow/unconfined"], true);
      assert.equal(questions[0]?.request._meta?.["crow/unconfined"], undefined);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  test("the editor's boolean Sandbox option turns confinement off for this session only, and on again", async () => {
    const outside = await mkdtemp(path.join("/var/tmp", "crow-switch-"));
    try {
      const created = await fx.agent.newSession(fx.ws.dir);
      const { sessionId } = created;
      const option = created.configOptions?.find((o) => o.id === "sandbox");
      assert.deepEqual(option && { type: option.type, currentValue: option.currentValue }, {
        type: "boolean",
        currentValue: true,
      });
      const off = await fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "sandbox",
        type: "boolean",
        value: false,
      });
      assert.equal(off.configOptions.find((o) => o.id === "sandbox")?.currentValue, false);
      fx.mock.script(
        reply().toolCall("terminal", { command: `echo unconfined > ${outside}/a.txt` }),
        textReply("ok").expect((req) => assert.equal(toolResults(req).at(-1), "(no output)")),
      );
      await fx.agent.prompt(sessionId, "write outside");
      assert.equal(await readFile(path.join(outside, "a.txt"), "utf8"), "unconfined\n");
      await fx.agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "sandbox",
        type: "boolean",
        value: true,
      });
      fx.mock.script(
        reply().toolCall("terminal", { command: `echo again > ${outside}/b.txt` }),
        textReply("ok").expect((req) => {
          const result = toolResults(req).at(-1) ?? "";
          assert.match(result, /The session's sandbox changed, so a new shell was started/);
          assert.match(result, /Read-only file system/);
        }),
      );
      await fx.agent.prompt(sessionId, "write outside again");
      fx.mock.assertDone();
      assert.equal(existsSync(path.join(outside, "b.txt")), false);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe("crow acp: with an editor that offers fs, writes keep the sandbox's writable roots", () => {
  const fx = useAcpFixture({ agent: { fs: true } });

  test("with the sandbox on, a write outside the workspace is refused and one inside is made by crow-mcp, never by the editor", async () => {
    const outside = await mkdtemp(path.join("/var/tmp", "crow-editor-"));
    try {
      const { sessionId } = await fx.agent.newSession(fx.ws.dir);
      fx.mock.script(
        reply().toolCall("write", { file_path: path.join(outside, "x.txt"), content: "x" }),
        reply().toolCall("write", { file_path: fx.ws.path("in.txt"), content: "in" }),
        textReply("ok").expect((req) => {
          const [out, inside] = toolResults(req);
          assert.match(out ?? "", /outside the sandbox's writable directories/);
          assert.match(inside ?? "", /in\.txt/);
        }),
      );
      await fx.agent.prompt(sessionId, "write both");
      fx.mock.assertDone();
      assert.equal(existsSync(path.join(outside, "x.txt")), false);
      assert.equal(await fx.ws.read("in.txt"), "in");
      // The editor would open the path after Crow's check (a link swapped meanwhile would steer it): crow-mcp writes.
      assert.ok(!fx.agent.fsCalls.some((c) => c.startsWith("write ")), fx.agent.fsCalls.join());
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe("crow acp: sandbox availability", () => {
  const fx = useAcpFixture({ startAgent: false });
  const noBwrap = { CROW_BWRAP: "/nonexistent/bwrap" };

  test("auto without bubblewrap: the session opens with one notice saying commands run unconfined", async () => {
    const agent = await fx.spawn({ env: noBwrap });
    const { sessionId, configOptions } = await agent.newSession(fx.ws.dir);
    assert.equal(
      configOptions?.find((o) => o.id === "sandbox"),
      undefined,
      "no Sandbox switch without bubblewrap",
    );
    const notice = await agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("unconfined"),
      true,
    );
    assert.match(JSON.stringify(notice), /bubblewrap \(bwrap\) is not installed/);
    fx.mock.script(reply().toolCall("terminal", { command: "echo runs > ran.txt" }), textReply("ok"));
    await agent.prompt(sessionId, "run");
    assert.equal(await fx.ws.read("ran.txt"), "runs\n");
  });

  test("required without bubblewrap: session/new fails with the reason", async () => {
    await writeFile(path.join(fx.crowHome, "config.yaml"), "sandbox: required\n");
    try {
      const agent = await fx.spawn({ env: noBwrap });
      await assert.rejects(agent.newSession(fx.ws.dir), (error: { message?: string; data?: unknown }) => {
        assert.match(JSON.stringify(error), /sandbox: required in config\.yaml, but commands run unconfined/);
        return true;
      });
    } finally {
      await writeFile(path.join(fx.crowHome, "config.yaml"), "");
    }
  });

  test("provider keys never reach the sandboxed shell: not after cd /, in bash -c, env -i nor subshells", async () => {
    const agent = await fx.spawn({ env: { OPENAI_API_KEY: "sk-acp-sandbox-secret" } });
    const { sessionId } = await agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("terminal", {
        command: `echo "[$OPENAI_API_KEY]"; cd /; bash -c 'echo "[$OPENAI_API_KEY]"'; env -i bash -c 'echo "[$OPENAI_API_KEY]"'; (echo "[$OPENAI_API_KEY]"); cat /proc/*/environ 2>/dev/null | grep -c sk-acp-sandbox-secret`,
      }),
      textReply("ok").expect((req) => {
        const result = toolResults(req).at(-1) ?? "";
        assert.doesNotMatch(result, /sk-acp-sandbox-secret/);
        assert.match(result, /^\[\]\n\[\]\n\[\]\n\[\]\n0\n/);
      }),
    );
    await agent.prompt(sessionId, "print the key");
    fx.mock.assertDone();
  });
});
