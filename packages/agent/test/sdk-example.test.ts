/**
 * examples/sdk/fix-tests.ts against the mock LLM: the SDK without ACP, configured from the environment (the mock's
 * URL), the real crow-mcp for `write`, an in-process `run_test` tool, one stored session per failing test file.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, reply, startMockLlm, textReply } from "@crow/testkit";
import { fixFailingTests, testFailure, testRunner } from "../../../examples/sdk/fix-tests.js";
import { createCrow, loadConfig } from "../src/index.js";

const FIXED = "export const add = (a, b) => a + b;\n";

describe("examples/sdk/fix-tests.ts", () => {
  let mock: MockLlm;
  let dir: string;
  let home: string;

  before(async () => {
    mock = await startMockLlm();
    dir = await mkdtemp(path.join(tmpdir(), "crow-fix-"));
    home = await mkdtemp(path.join(tmpdir(), "crow-fix-home-"));
    await mkdir(path.join(dir, "test"));
    await writeFile(path.join(dir, "math.mjs"), "export const add = (a, b) => a - b;\n");
    await writeFile(
      path.join(dir, "test", "math.test.mjs"),
      'import assert from "node:assert/strict";\nimport { test } from "node:test";\nimport { add } from "../math.mjs";\n' +
        'test("adds", () => assert.equal(add(2, 3), 5));\n',
    );
    await writeFile(
      path.join(dir, "test", "ok.test.mjs"),
      'import { test } from "node:test";\ntest("fine", () => {});\n',
    );
  });
  after(async () => {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  test("one session per failing test file, until all pass", async () => {
    const config = loadConfig({ OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model", CROW_HOME: home, HOME: home });
    const crow = await createCrow({ config, extensions: [testRunner(dir)] });
    try {
      mock.script(
        reply().toolCall("write", { file_path: path.join(dir, "math.mjs"), content: FIXED }),
        reply()
          .toolCall("run_test", { file: "test/math.test.mjs" })
          .expect((request) => {
            assert.match(String(request.body.messages[1]?.content), /test\/math\.test\.mjs fails/);
          }),
        textReply("Fixed: add now adds.").expect((request) => {
          assert.equal(request.body.messages.at(-1)?.content, "PASS");
        }),
      );
      const lines: string[] = [];
      const report = await fixFailingTests(crow, dir, ["test/math.test.mjs", "test/ok.test.mjs"], {
        log: (line) => lines.push(line),
      });
      mock.assertDone();
      assert.deepEqual(report.failing, []);
      assert.deepEqual(report.passing, ["test/math.test.mjs", "test/ok.test.mjs"]);
      assert.equal(report.attempts.length, 1);
      assert.equal(report.attempts[0]?.answer, "Fixed: add now adds.");
      assert.equal(await readFile(path.join(dir, "math.mjs"), "utf8"), FIXED);
      assert.equal(await testFailure(dir, "test/math.test.mjs"), undefined);
      // The attempt is a stored session, loadable later.
      const stored = await crow.store?.getSession(report.attempts[0]?.sessionId ?? "");
      assert.match(stored?.title ?? "", /test\/math\.test\.mjs fails/);
      assert.ok(lines.some((l) => l.includes("write")));
    } finally {
      await crow.close();
    }
  });
});
