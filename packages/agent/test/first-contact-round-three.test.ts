/**
 * What a new user met on a third first contact (issue #37), each as the user meets it: the built `crow` in a
 * private HOME against the mock LLM.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { closedPort, startMockLlm, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

describe("first contact, round three", { timeout: 180_000 }, () => {
  const fx = useRunFixture();

  test("OPENAI_BASE_URL alone: crow run --model <the endpoint's only model> runs", async () => {
    fx.mock.script(textReply("Hello.").expect((req) => assert.equal(req.body.model, "mock-model")));
    const run = await runCrow(["-c", fx.ws.dir, "--model", "mock-model", "hi"], { env: { ...fx.env, CROW_MODEL: "" } });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "Hello.\n");
    fx.mock.assertDone();
  });

  test("OPENAI_BASE_URL alone, nothing listening: 'Cannot reach' the URL and what to do, not 'No model configured'", async () => {
    const url = `http://127.0.0.1:${await closedPort()}/v1`;
    const run = await runCrow(["-c", fx.ws.dir, "hi"], { env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: url } });
    assert.equal(run.code, 2);
    assert.match(
      run.stderr,
      new RegExp(
        `^crow: Cannot reach ${url.replace(/[./]/g, "\\$&")}/models: ECONNREFUSED \\(asked which model to use, as ` +
          "CROW_MODEL is not set\\): start the server or correct OPENAI_BASE_URL, or set CROW_MODEL\\.",
      ),
    );
    assert.doesNotMatch(run.stderr, /No model configured/);
  });

  test("OPENAI_BASE_URL alone, an endpoint with two models: both named, and how to choose", async () => {
    const two = await startMockLlm({ models: ["alpha-7b", "beta-13b"] });
    try {
      const run = await runCrow(["-c", fx.ws.dir, "hi"], {
        env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: two.url },
      });
      assert.equal(run.code, 2);
      assert.match(
        run.stderr,
        /^crow: No model chosen: http:\/\/127\.0\.0\.1:\d+\/v1 offers 2 models \(alpha-7b, beta-13b\); set CROW_MODEL to one of them, or pass --model\./,
      );
      two.script(textReply("Beta here.").expect((req) => assert.equal(req.body.model, "beta-13b")));
      const chosen = await runCrow(["-c", fx.ws.dir, "--model", "beta-13b", "hi"], {
        env: { ...fx.env, CROW_MODEL: "", OPENAI_BASE_URL: two.url },
      });
      assert.equal(chosen.code, 0, chosen.stderr);
      assert.equal(chosen.stdout, "Beta here.\n");
      two.assertDone();
    } finally {
      await two.close();
    }
  });
});
