/**
 * What the agent of a trial gets from its task, through the built binary with the scripted model: the endpoint's
 * only model when none is configured (as `crow run`); no web tools when the task has no internet; the Dockerfile's
 * ENV and WORKDIR and task.toml's `[environment.env]` in its shell, with `${NAME}` / `${NAME:-default}` resolved as
 * Harbor does.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { runEval } from "./eval-helpers.js";

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

async function files(dir: string, content: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(content)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

/** `${inner}` as task.toml writes it (a template of Harbor's, not of JavaScript). */
const ref = (inner: string) => ["$", "{", inner, "}"].join("");

const PASS_TEST_SH = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n";

describe("crow eval: the agent's trial environment", () => {
  let mock: MockLlm;
  let home: string;
  let suites: string;
  /** A SearXNG stand-in on loopback: how many searches reached it. */
  let searxng: Server;
  let searches = 0;
  let searxngUrl: string;
  before(async () => {
    mock = await startMockLlm();
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-home-"));
    suites = await mkdtemp(path.join(tmpdir(), "crow-eval-suites-"));
    searxng = createServer((_req, res) => {
      searches++;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ results: [{ title: "Found", url: "https://example.com/", content: "the answer" }] }));
    });
    await new Promise<void>((resolve) => searxng.listen(0, "127.0.0.1", resolve));
    searxngUrl = `http://127.0.0.1:${(searxng.address() as AddressInfo).port}`;
  });
  after(async () => {
    await mock.close();
    await new Promise((resolve) => searxng.close(resolve));
    await rm(home, { recursive: true, force: true });
    await rm(suites, { recursive: true, force: true });
  });

  test("with OPENAI_BASE_URL alone, the endpoint's only model runs the trials, said on stderr", async () => {
    const suite = path.join(suites, "single-model");
    await files(path.join(suite, "hello"), { "instruction.md": "Say hello.\n", "tests/test.sh": PASS_TEST_SH });
    mock.script(textReply("Hello.").expect((req) => assert.equal(req.body.model, "mock-model")));
    const result = await runEval(["run", suite], { mockUrl: mock.url, home, env: { CROW_MODEL: undefined } });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    assert.match(result.stderr, /crow eval: model "mock-model": the only model at http:\/\/127\.0\.0\.1:\d+\/v1/);
    assert.match(result.stdout, /\| mock-model \| 1\/1 \| 100\.0 %/);
  });

  test("allow_internet = false: web_search and web_fetch are refused, saying why; with internet they work", async () => {
    const task = (allow: boolean) => ({
      "instruction.md": "Look it up.\n",
      "task.toml": `version = "1.0"\n[environment]\nallow_internet = ${allow}\n`,
      "tests/test.sh": PASS_TEST_SH,
    });
    const suite = path.join(suites, "internet");
    await files(path.join(suite, "offline"), task(false));
    await files(path.join(suite, "online"), task(true));
    const calls = () => [
      reply().toolCall("web_search", { queries: ["crow eval"] }),
      reply().toolCall("web_fetch", { url: `${mock.url}/models` }),
      textReply("Done."),
    ];
    // Tasks run in name order: offline, then online.
    const start = mock.requests.length;
    mock.script(...calls(), ...calls());
    const result = await runEval(["run", suite, "--json"], {
      mockUrl: mock.url,
      home,
      env: { SEARXNG_URL: searxngUrl },
    });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const offline = toolResults(mock.requests[start + 2]);
    assert.equal(offline.length, 2);
    for (const [i, tool] of ["web_search", "web_fetch"].entries()) {
      assert.match(
        offline[i] ?? "",
        new RegExp(
          `${tool} is not available in this trial: task offline sets \\[environment\\] allow_internet = false`,
        ),
      );
    }
    assert.doesNotMatch(offline.join("\n"), /the answer|mock-model/);
    const online = toolResults(mock.requests[start + 5]);
    assert.match(online[0] ?? "", /the answer/, "web_search reached the search engine");
    assert.match(online[1] ?? "", /mock-model/, "web_fetch reached the loopback URL");
    assert.equal(searches, 1, "only the trial with internet searched");
  });

  test("the Dockerfile's ENV and WORKDIR and [environment.env] (templates resolved) reach the agent's shell", async () => {
    const suite = path.join(suites, "env");
    await files(path.join(suite, "env"), {
      "instruction.md": "Use the environment.\n",
      "task.toml": [
        'version = "1.0"',
        "[environment.env]",
        `TOKEN = "${ref("EVAL_TEST_TOKEN")}"`,
        `MODE = "${ref("EVAL_TEST_UNSET:-fallback")}"`,
        `LITERAL = "a ${ref("EVAL_TEST_TOKEN")} b"`,
        "[verifier.env]",
        `EXPECTED = "${ref("EVAL_TEST_TOKEN")}"`,
        "",
      ].join("\n"),
      "environment/Dockerfile": [
        "FROM ubuntu:24.04",
        "WORKDIR /app/work",
        "COPY bin/ /app/bin/",
        "ENV GREETING=hello PATH=/app/bin:$PATH",
        "RUN chmod +x /app/bin/tool",
        "",
      ].join("\n"),
      "environment/bin/tool": "#!/bin/sh\necho tool-ran\n",
      "tests/test.sh": [
        "#!/bin/bash",
        'echo "verifier: $GREETING $TOKEN $EXPECTED $(pwd)"',
        'if [ "$GREETING $TOKEN $EXPECTED" = "hello from-host from-host" ] && [ "$(cat /app/work/seen)" = ok ]; then',
        "  echo 1 > /logs/verifier/reward.txt",
        "else echo 0 > /logs/verifier/reward.txt; fi",
        "",
      ].join("\n"),
    });
    mock.script(
      reply().toolCall("terminal", {
        command: 'echo "[$GREETING|$TOKEN|$MODE|$LITERAL|$(pwd)]"; tool; echo ok > seen',
      }),
      reply().toolCall("terminal", { command: "export GREETING=changed", reset: true }),
      reply().toolCall("terminal", { command: 'echo "[$GREETING|$(pwd)]"' }),
      textReply("Done."),
    );
    const result = await runEval(["run", suite, "--json"], {
      mockUrl: mock.url,
      home,
      env: { EVAL_TEST_TOKEN: "from-host" },
    });
    assert.equal(result.code, 0, result.stderr);
    mock.assertDone();
    const [first, , third] = toolResults(mock.requests.at(-1));
    assert.match(first ?? "", /\[hello\|from-host\|fallback\|a \$\{EVAL_TEST_TOKEN\} b\|\/app\/work\]/);
    assert.match(first ?? "", /^tool-ran$/m, "the Dockerfile's PATH");
    assert.match(third ?? "", /\[changed\|\/app\/work\]/, "the model's own export after a reset stands");
    assert.match(result.stdout, /"passed":true/, "the verifier saw the same environment");
  });

  test("a template without default whose variable is not set stops the run before it starts, naming the variable", async () => {
    const suite = path.join(suites, "unset");
    await files(path.join(suite, "unset"), {
      "instruction.md": "x\n",
      "task.toml": `[verifier.env]\nJUDGE_KEY = "${ref("EVAL_TEST_NOT_SET")}"\n`,
      "tests/test.sh": PASS_TEST_SH,
    });
    const result = await runEval(["run", suite, "--oracle"], { mockUrl: mock.url, home });
    assert.equal(result.code, 2, result.stderr);
    assert.match(
      result.stderr,
      /\[verifier\.env\]\.JUDGE_KEY is \$\{EVAL_TEST_NOT_SET\}, but EVAL_TEST_NOT_SET is not set in crow eval's environment: export it, or give a default as \$\{EVAL_TEST_NOT_SET:-value\}/,
    );
  });
});
