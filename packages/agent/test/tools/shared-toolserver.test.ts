/**
 * The built-in crow-mcp is one process shared by every session of the agent process, each session in its own MCP
 * session: its own shell in its own working directory, none able to see or steer another's. The socket it listens on
 * is private to the user.
 */
import assert from "node:assert/strict";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { createToolRouter, type ToolRouter } from "../../src/tools/index.js";
import { alive, run } from "./helpers.js";

function pidOf(router: ToolRouter): number | undefined {
  return router.servers().find((s) => s.name === "crow-mcp")?.pid;
}

describe("shared built-in toolserver: sessions apart", () => {
  let one: TempWorkspace;
  let two: TempWorkspace;
  let a: ToolRouter;
  let b: ToolRouter;
  before(async () => {
    one = await tempWorkspace();
    two = await tempWorkspace();
    [a, b] = await Promise.all([createToolRouter({ cwd: one.dir }), createToolRouter({ cwd: two.dir })]);
  });
  after(async () => {
    await a.close();
    await b.close();
    await one.cleanup();
    await two.cleanup();
  });

  test("two sessions use one crow-mcp process, each with its shell in its own directory", async () => {
    const pid = pidOf(a);
    assert.ok(pid && alive(pid));
    assert.equal(pidOf(b), pid);
    const [inA, inB] = await Promise.all([
      run(a, "terminal", { command: "pwd; echo shell=$$" }),
      run(b, "terminal", { command: "pwd; echo shell=$$" }),
    ]);
    assert.match(inA.text, new RegExp(`^${one.dir}$`, "m"));
    assert.match(inB.text, new RegExp(`^${two.dir}$`, "m"));
    const shellA = /shell=(\d+)/.exec(inA.text)?.[1];
    const shellB = /shell=(\d+)/.exec(inB.text)?.[1];
    assert.ok(shellA && shellB && shellA !== shellB, `${shellA} vs ${shellB}`);
  });

  test("what one session does in its shell never shows in the other's", async () => {
    await run(a, "terminal", { command: `export ONLY_IN_A=secret-a; cd ${two.dir}; sleep 30 &` });
    const seen = await run(b, "terminal", { command: 'echo "var=[$ONLY_IN_A]"; jobs | wc -l; pwd' });
    assert.match(seen.text, /var=\[\]/);
    assert.match(seen.text, /^0$/m, "the other session's background job is not in this shell");
    assert.match(seen.text, new RegExp(`^${two.dir}$`, "m"));
    // A's shell kept its own state, and B's cd did not move it.
    const own = await run(a, "terminal", { command: 'echo "var=[$ONLY_IN_A]"; jobs | wc -l' });
    assert.match(own.text, /var=\[secret-a\]/);
    assert.match(own.text, /^1$/m);
    // Relative paths are answered against each session's own directory.
    const rel = await run(b, "read", { file_path: "x.txt" });
    assert.match(rel.text, new RegExp(`must be an absolute path.*${path.join(two.dir, "x.txt")}`));
  });

  test("a closed session's shell stops while the other session goes on", async () => {
    const extra = await createToolRouter({ cwd: one.dir });
    const shell = Number(/shell=(\d+)/.exec((await run(extra, "terminal", { command: "echo shell=$$" })).text)?.[1]);
    assert.ok(alive(shell));
    await extra.close();
    const deadline = Date.now() + 10_000;
    while (alive(shell) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    assert.equal(alive(shell), false);
    const still = await run(a, "terminal", { command: "echo still here" });
    assert.match(still.text, /still here/);
  });

  test("the socket is reachable by this user only", () => {
    const args = readFileSync(`/proc/${pidOf(a) ?? 0}/cmdline`, "utf8").split("\0");
    const socket = args[args.indexOf("--socket") + 1] ?? "";
    assert.ok(statSync(socket).isSocket(), socket);
    assert.equal(statSync(socket).mode & 0o777, 0o600);
    assert.equal(statSync(path.dirname(socket)).mode & 0o777, 0o700);
  });
});
