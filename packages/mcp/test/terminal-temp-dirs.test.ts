// The terminal's private temp directories (issue #25, point 11e): a crow-mcp killed with SIGKILL cannot remove its
// own, so the next crow-mcp removes, at start, those whose crow-mcp is gone, and nothing else.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type TempWorkspace, tempWorkspace } from "@crow/testkit";

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync("true");
  assert.ok(child.pid);
  return child.pid;
}

/** A temp directory laid out as a day of killed crow-mcps leaves it, and the names that must survive a sweep. */
function litteredTemp(): { dir: string; orphans: string[]; kept: string[] } {
  const dir = mkdtempSync(path.join(tmpdir(), "crow-tmpdir-test-"));
  const make = (name: string, age = 0) => {
    const full = path.join(dir, name);
    mkdirSync(full);
    writeFileSync(path.join(full, "command"), "echo hi\n");
    if (age > 0) utimesSync(full, (Date.now() - age) / 1000, (Date.now() - age) / 1000);
    return name;
  };
  const day = 24 * 60 * 60 * 1000;
  const orphans = [make(`crow-terminal-${deadPid()}-a1B2c3`), make("crow-terminal-Zz9yX8", 2 * day)];
  const kept = [
    make(`crow-terminal-${process.pid}-d4E5f6`), // its process is running
    make("crow-terminal-Qq1wE2"), // the older unnamed form, but recent: its crow-mcp may still run
    make("crow-terminal-notes"), // not a name crow gives
  ];
  // A symbolic link is never followed nor removed, whatever its name.
  const link = `crow-terminal-${deadPid()}-g7H8i9`;
  symlinkSync(path.join(dir, "crow-terminal-notes"), path.join(dir, link));
  kept.push(link);
  return { dir, orphans, kept };
}

describe("orphaned terminal directories", () => {
  let ws: TempWorkspace;
  before(async () => {
    ws = await tempWorkspace();
  });
  after(() => ws.cleanup());

  test("a crow-mcp removes, at start, those its killed predecessors left, and keeps its own until it ends", async () => {
    const { dir, orphans, kept } = litteredTemp();
    try {
      const mcp = await connectStdio({ cwd: ws.dir, env: { TMPDIR: dir } });
      try {
        const result = await callTool(mcp.client, "terminal", { command: "echo ready" });
        assert.match(result.text, /ready/);
        // The sweep runs in the background from the first session on; a terminal call later it has long finished.
        const deadline = Date.now() + 10_000;
        while (orphans.some((name) => existsSync(path.join(dir, name))) && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        for (const name of orphans) assert.equal(existsSync(path.join(dir, name)), false, `${name} is still there`);
        for (const name of kept) assert.ok(existsSync(path.join(dir, name)), `${name} was removed`);
        const own = readdirSync(dir).filter((name) => /^crow-terminal-\d+-\w{6}$/.test(name) && !kept.includes(name));
        assert.equal(own.length, 1, `the running terminal's own directory: ${own.join(", ")}`);
        await mcp.close();
        for (const name of own) assert.equal(existsSync(path.join(dir, name)), false, `${name} outlived its crow-mcp`);
      } finally {
        await mcp.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
