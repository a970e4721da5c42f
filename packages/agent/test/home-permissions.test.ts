import assert from "node:assert/strict";
import { statSync } from "node:fs";
import { chmod, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, spawnAcpAgent, startMockLlm, type TempWorkspace, tempWorkspace, textReply } from "@crow/testkit";
import { runCrow, runEnv, tempHome } from "./run-helpers.js";

const modeOf = (file: string) => statSync(file).mode & 0o777;

describe("the Crow home and its store are private to the user", { timeout: 120_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("crow run creates a missing Crow home 0700 and crow.db 0600", async () => {
    const crowHome = path.join(home.dir, "fresh", ".crow");
    mock.script(textReply("hello"));
    const run = await runCrow(["say hello"], {
      env: { ...runEnv(mock.url, home.dir), CROW_HOME: crowHome },
      cwd: ws.dir,
    });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(modeOf(crowHome).toString(8), "700");
    assert.equal(modeOf(path.join(crowHome, "crow.db")).toString(8), "600");
  });

  test("crow acp tightens a crow.db an older Crow left readable by others", async () => {
    const crowHome = path.join(home.dir, "old");
    const db = path.join(crowHome, "crow.db");
    await mkdir(crowHome);
    // An empty file is an empty SQLite database.
    await writeFile(db, "");
    await chmod(db, 0o644);
    const agent = await spawnAcpAgent({ llmUrl: mock.url, env: { HOME: home.dir, CROW_HOME: crowHome } });
    try {
      await agent.newSession(ws.dir);
      assert.equal(modeOf(db).toString(8), "600");
    } finally {
      await agent.close();
    }
  });
});
