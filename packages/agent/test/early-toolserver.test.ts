// Which commands spawn the shared crow-mcp before the command line loads, and the environment it gets then.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { earlyToolserverEnvironment, usesToolserver } from "../src/entry/early-toolserver.js";

describe("the toolserver's head start", () => {
  test("only `crow acp` and a `crow run` that will run start it", () => {
    assert.equal(usesToolserver(["acp"]), true);
    assert.equal(usesToolserver(["run", "hello"]), true);
    assert.equal(usesToolserver(["run", "-i", "-c", "/tmp"]), true);
    assert.equal(usesToolserver(["acp", "extra"]), false);
    assert.equal(usesToolserver(["run", "--help"]), false);
    assert.equal(usesToolserver(["run", "x", "-h"]), false);
    assert.equal(usesToolserver(["sessions", "list"]), false);
    assert.equal(usesToolserver(["init"]), false);
    assert.equal(usesToolserver(["--version"]), false);
    assert.equal(usesToolserver([]), false);
  });

  test("its environment: the process's without secrets, plus the crow-mcp settings of .env (hidden from its shell)", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "crow-early-"));
    try {
      const env = { CROW_HOME: home, KEPT: "env", UNSET: undefined, OPENAI_API_KEY: "sk-not-for-children" };
      assert.deepEqual(earlyToolserverEnvironment(env), { CROW_HOME: home, KEPT: "env" });
      await writeFile(path.join(home, ".env"), "KEPT=dotenv\nADDED='from .env'\nSEARXNG_URL=http://s:1\n");
      assert.deepEqual(earlyToolserverEnvironment(env), {
        CROW_HOME: home,
        KEPT: "env",
        SEARXNG_URL: "http://s:1",
        CROW_CHILD_ENV_DROP: "SEARXNG_URL",
      });
      // A broken .env is the configuration loader's to report; the toolserver starts with the environment.
      await writeFile(path.join(home, ".env"), "this is not a variable\n");
      assert.deepEqual(earlyToolserverEnvironment(env), { CROW_HOME: home, KEPT: "env" });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
