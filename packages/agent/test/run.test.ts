import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_BIN,
  httpError,
  type MockLlm,
  reply,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { ANSI, runCrow, runEnv, tempHome } from "./run-helpers.js";

/** The last user message the mock received, as text. */
function lastUserText(mock: MockLlm): string {
  const messages = mock.requests.at(-1)?.body.messages ?? [];
  const user = messages.findLast((m) => m.role === "user");
  if (typeof user?.content === "string") return user.content;
  return JSON.stringify(user?.content);
}

describe("crow run (subprocess, no TTY)", { timeout: 300_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let env: Record<string, string>;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    env = runEnv(mock.url, home.dir);
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("one-shot: the answer alone on stdout, the session id on stderr, exit 0, no ANSI", async () => {
    mock.script(
      reply()
        .reasoning("The user greets me.")
        .text("Hello **there**.", 3)
        .expect((req) => assert.equal(req.body.messages.at(-1)?.content, "say hello")),
    );
    const run = await runCrow(["-c", ws.dir, "say", "hello"], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hello **there**.\n");
    assert.match(run.stderr, /\[thinking\] The user greets me\./);
    assert.match(run.stderr, /Session (\S+)\. Continue with: crow run -s \1(?: -c \S+)? "<prompt>"/);
    assert.doesNotMatch(run.stdout + run.stderr, ANSI);
    mock.assertDone();
  });

  test("the prompt can be piped on stdin", async () => {
    mock.script(textReply("Piped.").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "from a pipe\n")));
    const run = await runCrow(["-c", ws.dir], { env, input: "from a pipe\n" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Piped.\n");
    mock.assertDone();
  });

  test("tool calls show their status and the diff of a write; the file is written", async () => {
    const file = ws.path("notes/todo.txt");
    mock.script(
      reply().text("Writing it.").toolCall("write", { file_path: file, content: "buy milk\n" }),
      textReply("Done."),
    );
    const run = await runCrow(["-c", ws.dir, "write my todo"], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Writing it.\nDone.\n");
    const activity = run.stderr;
    // One line per finished call: piped stderr is a log, it cannot redraw a status in place.
    assert.match(activity, /(^|\n)\[done\] write/);
    assert.doesNotMatch(activity, /\[pending\]|\[running\]/);
    assert.match(activity, /--- \/dev\/null\n\s+\+\+\+ b\/notes\/todo\.txt\n\s+@@ -0,0 \+1 @@\n\s+\+buy milk\n/);
    assert.equal(await ws.read("notes/todo.txt"), "buy milk\n");
    mock.assertDone();
  });

  test("the terminal does not see <crow home>/.env's variables unless child_env.allow names them", async () => {
    const dotenvHome = await tempHome();
    await writeFile(
      path.join(dotenvHome.dir, ".env"),
      "CROW_TEST_DOTENV=from-dotenv\nCROW_TEST_BOTH=from-dotenv\nTEST_ALLOWED=from-dotenv\n",
    );
    await writeFile(path.join(dotenvHome.dir, "config.yaml"), "child_env:\n  allow: [TEST_ALLOWED]\n");
    mock.script(
      reply().toolCall("terminal", { command: 'echo "[$CROW_TEST_DOTENV|$CROW_TEST_BOTH|$TEST_ALLOWED]"' }),
      textReply("Printed."),
    );
    const run = await runCrow(["-c", ws.dir, "print them"], {
      env: { ...env, CROW_HOME: dotenvHome.dir, CROW_TEST_BOTH: "from-env" },
    });
    await dotenvHome.cleanup();
    assert.equal(run.code, 0, run.stderr);
    const toolMessage = mock.requests.at(-1)?.body.messages.findLast((m) => m.role === "tool");
    assert.match(JSON.stringify(toolMessage?.content), /\[\|from-env\|from-dotenv\]/);
  });

  test("a user system prompt that does not render: the built-in one is used and stderr says why", async () => {
    const promptHome = await tempHome();
    await mkdir(path.join(promptHome.dir, "prompts"));
    await writeFile(
      path.join(promptHome.dir, "prompts", "system_prompt.njk"),
      "Workspace: {{ workspace | nosuchfilter }}",
    );
    mock.script(
      textReply("Hi.").expect((req) => {
        const system = req.body.messages[0];
        assert.equal(system?.role, "system");
        assert.match(String(system?.content), /^You are Crow/);
      }),
    );
    const run = await runCrow(["-c", ws.dir, "hello"], { env: { ...env, CROW_HOME: promptHome.dir } });
    await promptHome.cleanup();
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hi.\n");
    assert.match(run.stderr, /system_prompt\.njk could not be rendered: .*nosuchfilter/);
    assert.match(run.stderr, /using the built-in system prompt instead/);
    mock.assertDone();
  });

  test("a failed tool call is marked failed with its reason", async () => {
    mock.script(reply().toolCall("read", { file_path: ws.path("missing.txt") }), textReply("It does not exist."));
    const run = await runCrow(["-c", ws.dir, "read missing.txt"], { env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /\[failed\] read: .*missing\.txt\n\s+│ .*(not found|No such file|does not exist)/i);
  });

  test("--json: one JSON event per line, session first, stop last", async () => {
    mock.script(reply().text("Fine, ", 1).text("thanks.").usage(20, 5));
    const run = await runCrow(["-c", ws.dir, "--json", "how are you"], { env });
    assert.equal(run.code, 0, run.stderr);
    const events = run.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; [key: string]: unknown });
    assert.equal(events[0]?.type, "session");
    const sessionId = events[0]?.sessionId;
    assert.equal(typeof sessionId, "string");
    assert.deepEqual(events.at(-1), { type: "stop", sessionId, stopReason: "end_turn" });
    assert.deepEqual(
      events.find((e) => e.type === "prompt"),
      { type: "prompt", sessionId, text: "how are you" },
    );
    const text = events
      .filter((e) => e.type === "update")
      .map((e) => e.update as { sessionUpdate: string; content?: { text?: string } })
      .filter((u) => u.sessionUpdate === "agent_message_chunk")
      .map((u) => u.content?.text)
      .join("");
    assert.equal(text, "Fine, thanks.");
    assert.ok(events.some((e) => (e.update as { sessionUpdate?: string })?.sessionUpdate === "usage_update"));
    mock.assertDone();
  });

  test("@path mentions attach the file (with a line range) to the prompt", async () => {
    await ws.write("src/app.ts", "line one\nline two\nline three\n");
    mock.script(textReply("Seen."));
    const run = await runCrow(["-c", ws.dir, "explain @src/app.ts#L2:3 please"], { env });
    assert.equal(run.code, 0, run.stderr);
    const sent = lastUserText(mock);
    assert.match(sent, /explain @src\/app\.ts#L2:3 please/);
    // A selection keeps its line numbers (the user pointed at those lines); a whole file comes as it is, as the read
    // tool gives a whole-file read.
    assert.match(sent, /\(lines 2-3\):\n2\tline two\n3\tline three$/);
    assert.doesNotMatch(sent, /line one/);
    mock.script(textReply("Seen."));
    const whole = await runCrow(["-c", ws.dir, "explain @src/app.ts please"], { env });
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(lastUserText(mock), /\n\nFile \S+app\.ts:\nline one\nline two\nline three$/);
  });

  test("--model switches the session's model; an unknown one is a usage error", async () => {
    const modelEnv = { ...env, CROW_MODELS: "mock-model,mock-large" };
    mock.script(textReply("Big answer.").expect((req) => assert.equal(req.body.model, "mock-large")));
    const run = await runCrow(["-c", ws.dir, "--model", "mock-large", "hi"], { env: modelEnv });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Big answer.\n");

    const bad = await runCrow(["-c", ws.dir, "--model", "nope", "hi"], { env: modelEnv });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown model "nope" \(available: mock-model, mock-large\)/);
    mock.assertDone();
  });

  test("--mode ask without a terminal rejects changes (says why, exit 1); --yes allows them", async () => {
    const file = ws.path("asked.txt");
    mock.script(
      reply().toolCall("write", { file_path: file, content: "x\n" }),
      textReply("Could not write."),
      reply().toolCall("write", { file_path: file, content: "x\n" }),
      textReply("Written."),
    );
    const rejected = await runCrow(["-c", ws.dir, "--mode", "ask", "write asked.txt"], { env });
    assert.equal(rejected.code, 1, rejected.stderr);
    assert.match(rejected.stderr, /Rejected write: .*asked\.txt: no terminal to ask \(pass --yes to allow\)\./);
    assert.equal(existsSync(file), false);

    const allowed = await runCrow(["-c", ws.dir, "--mode", "ask", "--yes", "write asked.txt"], { env });
    assert.equal(allowed.code, 0, allowed.stderr);
    assert.match(allowed.stderr, /Allowed by --yes: write: .*asked\.txt/);
    assert.equal(await ws.read("asked.txt"), "x\n");
    mock.assertDone();
  });

  test("-s continues a saved session: the model gets the history, only the new answer is printed", async () => {
    mock.script(
      textReply("Nice to meet you, Ada."),
      textReply("Your name is Ada.").expect((req) => {
        const said = req.body.messages.map((m) => `${m.role}: ${String(m.content)}`);
        assert.deepEqual(said.slice(1), [
          "user: my name is Ada",
          "assistant: Nice to meet you, Ada.",
          "user: what is my name?",
        ]);
      }),
    );
    const first = await runCrow(["-c", ws.dir, "my name is Ada"], { env });
    assert.equal(first.code, 0, first.stderr);
    const id = /Continue with: crow run -s (\S+)/.exec(first.stderr)?.[1];
    assert.ok(id, first.stderr);

    const next = await runCrow(["-c", ws.dir, "-s", id, "--json", "what is my name?"], { env });
    assert.equal(next.code, 0, next.stderr);
    const events = next.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; update?: { sessionUpdate: string }; [key: string]: unknown });
    assert.deepEqual(events[0], { type: "session", sessionId: id, loaded: true, modeId: "code" });
    // The replayed history is not part of a one-shot run's output.
    assert.equal(events.filter((e) => e.replay).length, 0);
    assert.deepEqual(events.at(-1), { type: "stop", sessionId: id, stopReason: "end_turn" });
    mock.assertDone();
  });

  test("-s with an unknown session: exit 2, the id named and `crow sessions list` suggested", async () => {
    const run = await runCrow(["-c", ws.dir, "-s", "no-such-session-000000", "hi"], { env });
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      /^crow: no stored session "no-such-session-000000" \(see the ids with: crow sessions list\)\n/,
    );
  });

  test("SIGINT (Ctrl-C without a TTY) cancels the turn: partial answer printed, exit 130", async () => {
    mock.script(reply().text("Half an ans").hang());
    const child = spawn(process.execPath, [CROW_BIN, "run", "-c", ws.dir, "go"], {
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => {
      stdout += t;
      if (t.includes("Half an ans")) child.kill("SIGINT");
    });
    child.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
    });
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 130, stderr);
    assert.equal(stdout, "Half an ans\n");
    assert.match(stderr, /Cancelling… \(press Ctrl-C again to quit\)\nCancelled\./);
    mock.assertDone();
  });

  describe("exit codes and errors on stderr", () => {
    test("a provider error: exit 1 with the provider, the status and its message", async () => {
      mock.script(httpError(500, { message: "overloaded" }), httpError(500, { message: "overloaded" }));
      const run = await runCrow(["-c", ws.dir, "hi"], { env });
      assert.equal(run.code, 1);
      assert.match(run.stderr, /crow: LLM provider "default" at \S+ failed \(2 attempts\): HTTP 500: overloaded/);
      mock.assertDone();
    });

    test("a retried request says so on stderr (retrying 1/1: HTTP 503), then the answer", async () => {
      mock.script(httpError(503, { message: "busy" }), textReply("Made it."));
      const run = await runCrow(["-c", ws.dir, "hi"], { env });
      assert.equal(run.code, 0, run.stderr);
      assert.equal(run.stdout, "Made it.\n");
      assert.match(run.stderr, /^retrying 1\/1: HTTP 503$/m);
      mock.assertDone();
    });

    test("the step limit: exit 3 with a note", async () => {
      mock.script(reply().toolCall("read", { file_path: ws.path("src/app.ts") }));
      const run = await runCrow(["-c", ws.dir, "loop"], { env: { ...env, CROW_MAX_STEPS: "1" } });
      assert.equal(run.code, 3, run.stderr);
      assert.match(run.stderr, /Stopped: the step limit for one prompt was reached/);
      mock.assertDone();
    });

    test("bad flags, a bad --cwd, an unknown mode, an empty prompt: exit 2", async () => {
      const flag = await runCrow(["--frobnicate", "hi"], { env });
      assert.equal(flag.code, 2);
      assert.match(
        flag.stderr,
        /crow run: unknown option --frobnicate \(a value that starts with '-' goes after '--', as in: -- --frobnicate\)\nRun 'crow run --help' for usage\./,
      );
      const cwd = await runCrow(["-c", ws.path("no/such/dir"), "hi"], { env });
      assert.equal(cwd.code, 2);
      assert.match(cwd.stderr, /--cwd .*no\/such\/dir: no such directory/);
      const mode = await runCrow(["-c", ws.dir, "--mode", "yolo", "hi"], { env });
      assert.equal(mode.code, 2);
      assert.match(mode.stderr, /unknown mode "yolo" \(available: code, ask, read-only\)/);
      const empty = await runCrow(["-c", ws.dir], { env, input: "  \n" });
      assert.equal(empty.code, 2);
      assert.match(empty.stderr, /the prompt on stdin is empty/);
    });

    test("a broken config: exit 2 with the file and line, no internal prefix, no session", async () => {
      const broken = ws.path("broken-home");
      await mkdir(broken, { recursive: true });
      await writeFile(path.join(broken, "config.yaml"), "models: [unclosed\n");
      const run = await runCrow(["-c", ws.dir, "hi"], { env: { ...env, CROW_HOME: broken } });
      assert.equal(run.code, 2);
      assert.match(run.stderr, /^crow: .*config\.yaml:\d+:\d+: invalid YAML/);
      assert.doesNotMatch(run.stderr, /crow acp|exited with code|Continue with/);
      assert.equal(existsSync(path.join(broken, "crow.db")), false);
    });

    test("--help prints the usage and exits 0", async () => {
      const run = await runCrow(["--help"], { env });
      assert.equal(run.code, 0);
      assert.match(run.stdout, /^Usage: crow run \[prompt…\] \[options\]/);
      assert.match(run.stdout, /--json/);
    });
  });
});
