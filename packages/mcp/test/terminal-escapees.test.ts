// With the sandbox off, a shell's processes die with it even when they left its session and its process tree:
// `setsid cmd &`, `setsid -f`, a double fork, `nohup setsid`. Each carries the shell's marker in its environment,
// which is what crow-mcp looks for when the shell ends. Through the real crow-mcp (stdio), as root and as an
// unprivileged user.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { callTool, connectStdio } from "@crow/testkit";

const NOBODY = 65534;

/** Pids of live processes whose command line contains `tag`. */
function running(tag: string): number[] {
  try {
    return execFileSync("pgrep", ["-f", tag], { encoding: "utf8" })
      .split("\n")
      .filter((line) => /^\d+$/.test(line))
      .map(Number)
      .filter((pid) => {
        try {
          return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
        } catch {
          return false;
        }
      });
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** Waits (bounded) until no process matches `tag`; returns those left. */
async function survivors(tag: string, withinMs = 5000): Promise<number[]> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const left = running(tag);
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Commands that leave the shell's session and tree; every sleep's duration ends in `tag` so it can be found. */
function escapees(tag: string): string {
  return [
    `setsid sleep 901.${tag} &`,
    `setsid -f sleep 902.${tag}`,
    `( ( sleep 903.${tag} & ) & )`,
    `nohup setsid sleep 904.${tag} >/dev/null 2>&1 &`,
    // Ready once all four run (the forks return before their sleep has started).
    `until [ "$(pgrep -fc '90[1-4]\\.${tag}')" = 4 ]; do sleep 0.05; done; echo started`,
  ].join("\n");
}

for (const who of ["root", "an unprivileged user"] as const) {
  describe(`sandbox off, crow-mcp run as ${who}: nothing a shell started outlives it`, () => {
    const uid = who === "root" ? undefined : NOBODY;

    for (const ending of ["the client disconnects", "the shell exits"] as const) {
      test(`setsid, setsid -f, a double fork and nohup setsid are gone when ${ending}`, async () => {
        const dir = mkdtempSync(path.join("/var/tmp", "crow-escapees-"));
        chmodSync(dir, 0o777);
        const tag = String(process.pid * 1000 + Math.floor(Math.random() * 1000));
        const mcp = await connectStdio({ cwd: dir, ...(uid !== undefined ? { uid, gid: uid } : {}) });
        try {
          const started = await callTool(mcp.client, "terminal", { command: escapees(tag) });
          assert.match(started.text, /started/);
          assert.equal(running(tag).length, 4, `four escapees run: ${started.text}`);
          if (ending === "the shell exits") {
            assert.match((await callTool(mcp.client, "terminal", { command: "exit" })).text, /The shell exited/);
            assert.deepEqual(await survivors(tag), []);
          }
        } finally {
          await mcp.close();
          rmSync(dir, { recursive: true, force: true });
        }
        assert.deepEqual(await survivors(tag), []);
      });
    }
  });
}
