// Which commands spawn the shared crow-mcp before the command line loads, and the environment it gets then.
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { environmentWithDotenv, usesToolserver } from "../src/early-toolserver.js";

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

  test("its environment: the process's plus what .env adds; without a readable .env, the process's", async () => {
    const home = await mkdtemp(path.join(tmpdir(), "crow-early-"));
    try {
      const env = { CROW_HOME: home, KEPT: "env", UNSET: undefined };
      assert.deepEqual(environmentWithDotenv(env), { CROW_HOME: home, KEPT: "env" });
      await writeFile(path.join(home, ".env"), "KEPT=dotenv\nADDED='from .env'\n");
      assert.deepEqual(environmentWithDotenv(env), { CROW_HOME: home, KEPT: "env", ADDED: "from .env" });
      // A broken .env is the configuration loader's to report; the toolserver starts with the environment.
      await writeFile(path.join(home, ".env"), "this is not a variable\n");
      assert.deepEqual(environmentWithDotenv(env), { CROW_HOME: home, KEPT: "env" });
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  });
});
