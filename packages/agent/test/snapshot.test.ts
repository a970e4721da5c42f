/**
 * The `crow` launcher (bundle/crow) and crow's V8 startup snapshot: the first start of an agent command runs crow.js
 * and builds the snapshot in the background; later starts run from it, with everything working as before (tools over
 * the shared crow-mcp, itself started from its own snapshot; the store; extensions imported from config.yaml; stdout
 * protocol only; the modules the snapshots leave out, loaded when first needed); a stale or refused snapshot is not
 * used. Each test has its own cache directory (XDG_CACHE_HOME), HOME and CROW_HOME.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, realpathSync, statSync, utimesSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_BIN,
  httpError,
  type MockLlm,
  reply,
  spawnAcpAgent,
  startMockLlm,
  startPostgres,
  type TempWorkspace,
  tempWorkspace,
  textReply,
  toolResultText,
} from "@crow/testkit";
import { type RunResult, runEnv, runProcess, tempHome, waitForSnapshotBuilders } from "./run-helpers.js";

const LAUNCHER = path.join(path.dirname(CROW_BIN), "crow");
const FROM_SNAPSHOT = /started from the startup snapshot/;

/** Runs the launcher with `args`. */
function launch(args: readonly string[], env: Record<string, string>, cwd?: string): Promise<RunResult> {
  return runProcess(LAUNCHER, args, cwd === undefined ? { env } : { env, cwd });
}

/** Every file under `dir` whose name ends with `suffix`. */
function filesUnder(dir: string, suffix: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((name) => name.endsWith(suffix))
    .map((name) => path.join(dir, name));
}

/** Polls until `probe` returns something (the background build takes seconds; minutes on a loaded machine). */
async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 240_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe("the crow launcher and its startup snapshot", { timeout: 600_000 }, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: { dir: string; cleanup: () => Promise<void> };
  let cache: string;
  let env: Record<string, string>;
  let blob: string;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace();
    home = await tempHome();
    cache = path.join(home.dir, "cache");
    env = runEnv(mock.url, home.dir, { XDG_CACHE_HOME: cache, CROW_LOG: "debug", NODE_OPTIONS: undefined });
  });
  after(async () => {
    await waitForSnapshotBuilders(cache);
    await mock.close();
    await ws.cleanup();
    await home.cleanup();
  });

  test("the first crow run builds the snapshot in the background; the next one starts from it and works", async () => {
    // The blob of an installation that is gone (an old `npx crow-agent@<version>`): the build removes it.
    const orphan = path.join(
      cache,
      "crow",
      "snapshot",
      home.dir,
      "gone",
      "bundle",
      "usr",
      "bin",
      "node",
      "0123456789ab.blob",
    );
    await mkdir(path.dirname(orphan), { recursive: true });
    await writeFile(orphan, "stale");
    mock.script(reply().toolCall("terminal", { command: "echo first-$((40+2))" }), textReply("first done"));
    const first = await launch(["run", "-c", ws.dir, "go"], env);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(first.stdout, "first done\n");
    assert.doesNotMatch(first.stderr, FROM_SNAPSHOT);
    mock.assertDone();

    // crow's blob, then the shared crow-mcp's: <cache>/crow/snapshot/<the bundle's real directory>/<node>/<build>.blob
    const blobs = await waitFor("the two snapshot blobs, and the removed installation's gone", () => {
      const found = filesUnder(cache, ".blob");
      return found.length === 2 && !found.includes(orphan) ? found : undefined;
    });
    assert.deepEqual(filesUnder(cache, ".failed"), [], "no failed build");
    const agentDir = path.join(cache, "crow", "snapshot", realpathSync(path.dirname(CROW_BIN))) + path.sep;
    const agentBlob = blobs.find((b) => b.startsWith(agentDir));
    assert.ok(agentBlob, `no blob under ${agentDir}: ${blobs.join(", ")}`);
    blob = agentBlob;
    for (const b of blobs) assert.match(path.basename(b), /^[0-9a-f]{12}\.blob$/);

    // The shell reads its parent's command line below, which the sandbox's PID namespace hides: no sandbox here.
    await writeFile(path.join(home.dir, "config.yaml"), "sandbox: off\n");
    mock.script(
      // The terminal's shell is a child of the shared crow-mcp: its command line says how that one started.
      reply().toolCall("terminal", { command: "echo second-$((40+2)); tr '\\0' ' ' < /proc/$PPID/cmdline" }),
      textReply("second done").expect((req) => {
        const result = JSON.stringify(req.body.messages.at(-1)?.content);
        assert.match(result, /second-42/);
        assert.match(
          result,
          /--snapshot-blob \S+\.blob \S*crow-mcp\.js --socket/,
          "crow-mcp started from its snapshot",
        );
      }),
    );
    const second = await launch(["run", "-c", ws.dir, "go"], env);
    assert.equal(second.code, 0, second.stderr);
    assert.equal(second.stdout, "second done\n");
    assert.match(second.stderr, FROM_SNAPSHOT);
    mock.assertDone();
    // The store of the first run is the store of the second: both sessions are listed (from the snapshot too).
    const listed = await launch(["sessions", "list", "--json"], env);
    assert.equal(listed.code, 0, listed.stderr);
    assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 2);
  });

  test("crow acp from the snapshot: extensions of config.yaml load, tools run, stdout carries ACP only", async () => {
    assert.ok(blob, "the first test built the snapshot");
    const crowHome = path.join(home.dir, "acp-home");
    await mkdir(path.join(crowHome, "extensions"), { recursive: true });
    await writeFile(
      path.join(crowHome, "extensions", "shout.mjs"),
      `export default (crow) => {
  crow.registerTool({
    name: "shout",
    description: "Upper-cases a text.",
    parameters: crow.z.object({ text: crow.z.string() }),
    readOnly: true,
    execute: ({ text }) => text.toUpperCase() + "!",
  });
};
`,
    );
    await writeFile(path.join(crowHome, "config.yaml"), "extensions:\n  - ./extensions/shout.mjs\n");
    await ws.write("note.txt", "from the workspace\n");
    const agent = await spawnAcpAgent({
      command: { file: LAUNCHER, args: ["acp"] },
      llmUrl: mock.url,
      cwd: ws.dir,
      env: { ...env, CROW_HOME: crowHome, HOME: home.dir },
    });
    try {
      const { sessionId } = await agent.newSession(ws.dir);
      mock.script(
        reply()
          .toolCall("shout", { text: "hi" })
          .expect((req) => {
            const names = (req.body.tools ?? []).map((t) => t.function.name);
            assert.ok(names.includes("shout"), `the extension's tool is offered: ${names.join(", ")}`);
            assert.ok(names.includes("read"), "crow-mcp's tools are offered");
          }),
        reply().toolCall("read", { file_path: ws.path("note.txt") }),
        textReply("all read"),
      );
      const result = await agent.prompt(sessionId, "go");
      assert.equal(result.stopReason, "end_turn");
      const done = result.updates.filter((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed");
      assert.equal(done.length, 2, JSON.stringify(result.updates));
      assert.ok(done.some((u) => toolResultText(u).includes("HI!")));
      assert.ok(done.some((u) => toolResultText(u).includes("from the workspace")));
      mock.assertDone();
      for (const line of agent.stdoutLines) if (line.trim()) JSON.parse(line);
      assert.match(agent.stderr(), FROM_SNAPSHOT);
      assert.doesNotMatch(agent.stderr(), /failed to load|ExperimentalWarning/i);
    } finally {
      await agent.close();
    }
  });

  test("what the snapshots leave out loads when first needed: web_fetch's converter, provider errors, PostgreSQL", async () => {
    assert.ok(blob, "the first test built the snapshot");
    const site = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(
        "<!DOCTYPE html><html><head><title>Nests</title></head><body><article><h1>How crows nest</h1>" +
          `<p>${"Crows build their nests high in the trees, out of sticks and bark. ".repeat(8)}<strong>Both parents</strong> feed the young.</p></article></body></html>`,
      );
    });
    await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
    const pg = await startPostgres();
    const pgHome = path.join(home.dir, "pg-home");
    try {
      const url = `http://127.0.0.1:${(site.address() as AddressInfo).port}/nests`;
      mock.script(
        reply().toolCall("web_fetch", { url }),
        textReply("fetched").expect((req) => {
          const result = JSON.stringify(req.body.messages.at(-1)?.content);
          assert.match(result, /# How crows nest/, "the page came back as Markdown");
          assert.match(result, /\*\*Both parents\*\* feed the young/);
        }),
      );
      const fetched = await launch(["run", "-c", ws.dir, "go"], env);
      assert.equal(fetched.code, 0, fetched.stderr);
      assert.equal(fetched.stdout, "fetched\n");
      assert.match(fetched.stderr, FROM_SNAPSHOT);
      mock.assertDone();

      mock.script(httpError(500, { message: "overloaded" }), httpError(500, { message: "overloaded" }));
      const failed = await launch(["run", "-c", ws.dir, "go"], env);
      assert.equal(failed.code, 1, failed.stderr);
      assert.match(failed.stderr, /LLM provider "default" at \S+ failed \(2 attempts\): HTTP 500: overloaded/);
      assert.match(failed.stderr, FROM_SNAPSHOT);

      await mkdir(pgHome, { recursive: true });
      await writeFile(path.join(pgHome, "config.yaml"), `db_uri: ${await pg.createDatabase()}\n`);
      const pgEnv = { ...env, CROW_HOME: pgHome };
      mock.script(textReply("stored"));
      const stored = await launch(["run", "-c", ws.dir, "remember this"], pgEnv);
      assert.equal(stored.code, 0, stored.stderr);
      assert.match(stored.stderr, FROM_SNAPSHOT);
      const listed = await launch(["sessions", "list", "--json"], pgEnv);
      assert.equal(listed.code, 0, listed.stderr);
      assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 1, listed.stdout);
      mock.assertDone();
    } finally {
      site.close();
      await pg.stop();
    }
  });

  test("not from the snapshot: with CROW_NO_SNAPSHOT or NODE_OPTIONS; a node newer than the blob rebuilds it", async () => {
    assert.ok(blob, "the first test built the snapshot");
    const optedOut = await launch(["--version"], { ...env, CROW_NO_SNAPSHOT: "1" });
    assert.equal(optedOut.code, 0, optedOut.stderr);
    assert.doesNotMatch(optedOut.stderr, FROM_SNAPSHOT);
    // V8 refuses a snapshot built under other flags; NODE_OPTIONS may carry some.
    const withOptions = await launch(["--version"], { ...env, NODE_OPTIONS: "--max-old-space-size=512" });
    assert.equal(withOptions.code, 0, withOptions.stderr);
    assert.doesNotMatch(withOptions.stderr, FROM_SNAPSHOT);
    const fromSnapshot = await launch(["--version"], env);
    assert.equal(fromSnapshot.stdout, optedOut.stdout);
    assert.match(fromSnapshot.stderr, FROM_SNAPSHOT);

    // A blob older than node (node upgraded in place) is not used, and the next agent start builds it anew.
    utimesSync(blob, new Date(0), new Date(0));
    mock.script(textReply("stale"));
    const stale = await launch(["run", "-c", ws.dir, "go"], env);
    assert.equal(stale.code, 0, stale.stderr);
    assert.doesNotMatch(stale.stderr, FROM_SNAPSHOT);
    await waitFor("the rebuilt blob", () => (statSync(blob).mtimeMs > 0 ? true : undefined));
    const rebuilt = await launch(["--version"], env);
    assert.match(rebuilt.stderr, FROM_SNAPSHOT);
  });
});
