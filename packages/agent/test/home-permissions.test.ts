import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { spawnAcpAgent, textReply } from "@crow/testkit";
import { runCrow, runEnv, useRunFixture } from "./run-helpers.js";

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe("the Crow home and its store are private to the user", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("crow run creates a missing Crow home 0700 and crow.db 0600", async () => {
    const crowHome = path.join(fx.home.dir, "fresh", ".crow");
    fx.mock.script(textReply("hello"));
    const run = await runCrow(["say hello"], {
      env: { ...runEnv(fx.mock.url, fx.home.dir), CROW_HOME: crowHome },
      cwd: fx.ws.dir,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(modeOf(crowHome).toString(8), "700");
    assert.equal(modeOf(path.join(crowHome, "crow.db")).toString(8), "600");
  });

  test("crow acp tightens a crow.db an older Crow left readable by others", async () => {
    const crowHome = path.join(fx.home.dir, "old");
    const db = path.join(crowHome, "crow.db");
    await mkdir(crowHome);
    // An empty file is an empty SQLite database.
    await writeFile(db, "");
    await chmod(db, 0o644);
    const agent = await spawnAcpAgent({ llmUrl: fx.mock.url, env: { HOME: fx.home.dir, CROW_HOME: crowHome } });
    try {
      await agent.newSession(fx.ws.dir);
      assert.equal(modeOf(db).toString(8), "600");
    } finally {
      await agent.close();
    }
  });
});
