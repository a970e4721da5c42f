/**
 * What a new user met on a fourth first contact (issue #52), each as the user meets it: the built `crow` in a
 * private HOME against the mock LLM.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { CROW_BIN, reply, startMockLlm, textReply } from "@crow/testkit";
import { PtyRun, runCrow, runProcess, useRunFixture } from "./run-helpers.js";

const DIFF = [
  "diff --git a/package.json b/package.json",
  "--- a/package.json",
  "+++ b/package.json",
  '-    "@types/node": "^20.0.0"',
  '+    "@types/node": "^22.0.0"',
].join("\n");

describe("first contact, round four", { timeout: 180_000 }, () => {
  const fx = useRunFixture();

  test('git diff | crow run "review this" --json: the model gets the prompt and the piped diff, in a delimited block', async () => {
    fx.mock.script(
      textReply("Looks fine.").expect((req) => {
        const last = req.body.messages.at(-1);
        assert.equal(last?.role, "user");
        const text = String(last?.content);
        assert.ok(text.startsWith("review this\n\n"), text);
        assert.ok(text.includes(`<stdin>\n${DIFF}\n</stdin>`), text);
      }),
    );
    // A real shell pipe, as in the README's example; "@types/node" in the diff is not taken for an @mention.
    const script = 'printf "%s\\n" "$2" | "$0" "$1" run -c "$3" "review this" --json';
    const run = await runProcess("sh", ["-c", script, process.execPath, CROW_BIN, DIFF, fx.ws.dir], { env: fx.env });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /Looks fine\./);
    assert.doesNotMatch(run.stdout, /"notice"/);
    fx.mock.assertDone();
  });

  test("a piped input over 256 KB: its beginning is sent, the cut said to the model and to the user", async () => {
    const line = `${"x".repeat(99)}\n`;
    const input = line.repeat(4000); // 400 000 bytes
    fx.mock.script(
      textReply("Read it.").expect((req) => {
        const text = String(req.body.messages.at(-1)?.content);
        assert.ok(text.startsWith("summarize\n\n"));
        assert.match(text, /\n\[the input was 391 KB: only its first 256 KB are above\]$/);
        assert.ok(text.length < 270 * 1024, `${text.length} characters sent`);
      }),
    );
    const run = await runCrow(["-c", fx.ws.dir, "summarize"], { env: fx.env, input });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /stdin: 391 KB piped, the first 256 KB sent to the model/);
    fx.mock.assertDone();
  });

  test("a prompt with an empty stdin (</dev/null, a closed pipe): the prompt alone, nothing added", async () => {
    fx.mock.script(textReply("Hi.").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "hello")));
    const run = await runCrow(["-c", fx.ws.dir, "hello"], { env: fx.env, input: "" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hi.\n");
    fx.mock.assertDone();
  });

  test("a prompt with a stdin left open and silent (a script's socket): a notice after 3 s, then the prompt alone", async () => {
    fx.mock.script(textReply("Hi.").expect((req) => assert.equal(req.body.messages.at(-1)?.content, "hello")));
    const child = spawn(process.execPath, [CROW_BIN, "run", "-c", fx.ws.dir, "hello"], {
      env: fx.env,
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => (stdout += t));
    child.stderr.setEncoding("utf8").on("data", (t: string) => (stderr += t));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    assert.equal(code, 0, stderr);
    assert.equal(stdout, "Hi.\n");
    assert.match(stderr, /nothing arrived on stdin in 3 s: running the prompt without it/);
    fx.mock.assertDone();
  });

  test("the user's tools in a PATH folder under /tmp run in the sandboxed shell (their node too); a hidden one is named", async () => {
    const tools = mkdtempSync(path.join(tmpdir(), "crow-path-tools-"));
    try {
      const bin = path.join(tools, "bin");
      mkdirSync(bin);
      writeFileSync(path.join(bin, "mytool"), "#!/bin/sh\necho mytool-ran\n");
      writeFileSync(path.join(bin, "node"), "#!/bin/sh\necho v99.0.0-the-users-node\n");
      for (const name of ["mytool", "node"]) chmodSync(path.join(bin, name), 0o755);
      // A folder in Crow's checkpoints (hidden from the shell: copies of workspaces) on PATH too.
      const secret = path.join(fx.home.dir, "checkpoints", "bin");
      mkdirSync(secret, { recursive: true });
      // A service's unix socket in that folder: mounted with it, it stays out of reach (as /tmp kept it).
      const server = createServer(() => {});
      await new Promise<void>((resolve) => server.listen(path.join(bin, "agent.sock"), resolve));
      // A PATH folder that holds the temporary directory (where crow-mcp's socket and each shell's private /tmp
      // live) is not mounted: it is named in the notice instead.
      const temp = path.join(tools, "tmp");
      mkdirSync(temp);
      writeFileSync(path.join(temp, "host-only.txt"), "host-only-content\n");
      const env = {
        ...fx.env,
        TMPDIR: temp,
        PATH: `${bin}:${secret}:/tmp:${tools}:${fx.env.PATH ?? "/usr/bin:/bin"}`,
      };
      fx.mock.script(
        reply().toolCall("terminal", {
          command: `mytool; node --version; if [ -S ${bin}/agent.sock ]; then echo socket-reachable; else echo socket-covered; fi; cat ${temp}/host-only.txt || echo temp-hidden`,
        }),
        textReply("ran").expect((req) => {
          const result = String(req.body.messages.at(-1)?.content);
          assert.match(result, /mytool-ran/);
          assert.match(result, /socket-covered/);
          assert.match(result, /temp-hidden/);
          assert.doesNotMatch(result, /host-only-content/);
          assert.match(result, /v99\.0\.0-the-users-node/);
          assert.doesNotMatch(result, /command not found/);
        }),
      );
      const run = await runCrow(["-c", fx.ws.dir, "--yes", "run mytool"], { env });
      server.close();
      assert.equal(run.code, 0, run.stderr);
      assert.match(run.stderr, /\/tmp \(\/tmp is the sandbox's own, private one\)/);
      assert.ok(run.stderr.includes(`${tools} (it holds ${temp}, private to each sandboxed shell)`), run.stderr);
      assert.match(
        run.stderr,
        /Sandbox: the shell's PATH lacks \S+\/checkpoints\/bin \(it lies in \S+\/checkpoints, which/,
      );
      assert.doesNotMatch(run.stderr, new RegExp(`lacks[^\n]*${bin}`));
      fx.mock.assertDone();
    } finally {
      rmSync(tools, { recursive: true, force: true });
    }
  });

  test("crow run -i --mode ask: 'Mode: ask' is said once, before the REPL's prompt", async () => {
    const run = new PtyRun(["-i", "--mode", "ask", "-c", fx.ws.dir], fx.env, fx.ws.dir);
    try {
      await run.waitFor(/crow› $/);
      run.write("\x04");
      assert.equal(await run.exited, 0);
      const text = run.text;
      assert.equal(text.match(/Mode: ask/g)?.length, 1, text);
      assert.ok(text.indexOf("Mode: ask") < text.indexOf("crow›"), text);
    } finally {
      run.kill();
    }
  });

  test("OPENAI_BASE_URL alone, --model nope: refused before anything runs, naming the endpoint's models", async () => {
    const two = await startMockLlm({ models: ["alpha-7b", "beta-13b"] });
    try {
      const run = await runCrow(["-c", fx.ws.dir, "--model", "nope", "hi"], {
        env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: two.url },
      });
      assert.equal(run.code, 2, run.stderr);
      assert.match(
        run.stderr,
        /^crow: Unknown model "nope": http:\/\/127\.0\.0\.1:\d+\/v1 offers 2 models \(alpha-7b, beta-13b\); pass one of them to --model\./,
      );
      assert.equal(two.requests.length, 0, "no chat request was sent");
    } finally {
      await two.close();
    }
  });

  test("a shell pipe slow to start: waited for, said after 3 s, and its input still reaches the model", async () => {
    fx.mock.script(
      textReply("Got it.").expect((req) => {
        const text = String(req.body.messages.at(-1)?.content);
        assert.ok(text.includes("<stdin>\nlate output\n</stdin>"), text);
      }),
    );
    // A named pipe stands for a build that prints nothing for a while: its writer (this test) writes only once crow
    // has said it is waiting, whatever the machine's speed.
    const fifo = path.join(fx.home.dir, "slow-pipe");
    execFileSync("mkfifo", [fifo]);
    const child = spawn(
      "sh",
      ["-c", 'exec "$0" "$1" run -c "$2" "why did it fail" < "$3"', process.execPath, CROW_BIN, fx.ws.dir, fifo],
      {
        env: fx.env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    let said = () => {};
    const waiting = new Promise<void>((resolve) => (said = resolve));
    child.stdout.setEncoding("utf8").on("data", (t: string) => (stdout += t));
    child.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
      if (/waiting for the input piped on stdin/.test(stderr)) said();
    });
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
    const writer = await open(fifo, "w");
    await waiting;
    await writer.write("late output\n");
    await writer.close();
    assert.equal(await closed, 0, stderr);
    assert.match(
      stderr,
      /waiting for the input piped on stdin \(nothing in 3 s yet\); if there is none, run with <\/dev\/null/,
    );
    assert.equal(stdout, "Got it.\n");
    fx.mock.assertDone();
  });
});
