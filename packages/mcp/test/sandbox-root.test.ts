/**
 * The sandbox holds when crow-mcp runs as root (CI, containers) and as an ordinary user: from the model's seat, a
 * command that remounts / read-write, unmounts the read-only `.git` or the bind hiding Crow's `.env`, or does so in a
 * nested namespace, gets nowhere. Run as root, bwrap keeps every capability inside unless told to drop them, and
 * each of these attacks then succeeded. On real bubblewrap; the unprivileged half runs crow-mcp as nobody (65534).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

const SECRET = "sk-crow-root-test-secret";
const isRoot = process.getuid?.() === 0;

/** Gives a tree to `uid` (the unprivileged run: so that only the sandbox stands between it and these files). */
function give(dir: string, uid: number | undefined): void {
  if (uid !== undefined) execFileSync("chown", ["-R", `${uid}:${uid}`, dir]);
}

for (const as of [
  { label: "as root", uid: undefined },
  { label: "as an unprivileged user", uid: 65534 },
] as const) {
  describe(`sandbox ${as.label}: remounts and unmounts from inside get nowhere`, {
    skip: !isRoot ? "needs root (the root case, and setpriv for the other)" : false,
  }, () => {
    let ws: TempWorkspace;
    let outside: string;
    let crowHome: string;
    let mcp: McpConnection;

    before(async () => {
      ws = await tempWorkspace("crow-sbx-root-");
      await ws.write("README.md", "hello\n");
      execFileSync("git", ["init", "-q"], { cwd: ws.dir });
      // Outside /tmp: the sandbox's private /tmp would hide a /tmp path instead of refusing the write.
      outside = await mkdtemp(path.join("/var/tmp", "crow-sbx-root-out-"));
      crowHome = await mkdtemp(path.join("/var/tmp", "crow-sbx-root-home-"));
      await writeFile(path.join(crowHome, ".env"), `OPENAI_API_KEY=${SECRET}\n`);
      await chmod(path.join(crowHome, ".env"), 0o644);
      for (const dir of [ws.dir, outside, crowHome]) give(dir, as.uid);
      mcp = await connectStdio({
        cwd: ws.dir,
        ...(as.uid !== undefined ? { uid: as.uid, gid: as.uid } : {}),
      });
    });
    after(async () => {
      await mcp.close();
      await ws.cleanup();
      await rm(outside, { recursive: true, force: true });
      await rm(crowHome, { recursive: true, force: true });
    });

    /** Runs `command` in the session's shell under `mode` (the agent's policy: Crow's .env hidden). */
    async function run(command: string, mode: "workspace-write" | "read-only" = "workspace-write"): Promise<string> {
      const policy = {
        mode,
        writable: mode === "workspace-write" ? [ws.dir] : [],
        readOnly: [],
        network: true,
        hidden: [path.join(crowHome, ".env")],
      };
      const result = (await mcp.client.callTool({
        name: "terminal",
        arguments: { command },
        _meta: { "crow/sandbox": policy },
      })) as { content: Array<{ text?: string }> };
      return result.content.map((c) => c.text ?? "").join("");
    }

    test("remounting / read-write, then writing outside the workspace, fails", async () => {
      const text = await run(`mount -o remount,bind,rw / 2>&1; echo pwned > ${outside}/remounted.txt; echo done`);
      assert.match(text, /done/);
      assert.equal(existsSync(path.join(outside, "remounted.txt")), false, text);
    });

    test("unmounting the read-only .git (or its hooks) and planting a hook fails", async () => {
      const text = await run(
        `umount -l .git/hooks 2>&1; umount -l .git 2>&1; mkdir -p .git/hooks; printf '#!/bin/sh\\ntouch ${outside}/hook-ran\\n' > .git/hooks/pre-commit; echo done`,
      );
      assert.match(text, /done/);
      assert.equal(existsSync(ws.path(".git/hooks/pre-commit")), false, text);
    });

    test("unmounting the bind that hides Crow's .env, then printing it, fails", async () => {
      const text = await run(`umount -l ${crowHome}/.env 2>&1; cat ${crowHome}/.env; echo done`);
      assert.match(text, /done/);
      assert.doesNotMatch(text, new RegExp(SECRET));
    });

    test("in read-only mode, a remount then a write in the workspace or outside fails", async () => {
      const text = await run(
        `mount -o remount,bind,rw / 2>&1; echo x > ${outside}/ro.txt; echo x > ${ws.dir}/ro.txt; echo done`,
        "read-only",
      );
      assert.match(text, /done/);
      assert.equal(existsSync(path.join(outside, "ro.txt")), false, text);
      assert.equal(existsSync(ws.path("ro.txt")), false, text);
    });

    test("the kernel's settings stay out of reach: /proc/sys (core_pattern runs a program as root on the host)", async () => {
      // Only the values already there are written back: harmless should the wall fail.
      const text = await run(
        [
          'for f in kernel/core_pattern vm/swappiness; do v=$(cat /proc/sys/$f); if (echo "$v" > /proc/sys/$f) 2>/dev/null; then echo ALLOWED: $f; else echo denied: $f; fi; done',
          "[ -e /proc/sysrq-trigger ] && { (echo > /proc/sysrq-trigger) 2>/dev/null && echo ALLOWED: sysrq || echo denied: sysrq; }",
          "echo done",
        ].join("; "),
      );
      assert.match(text, /done/);
      assert.match(text, /denied: kernel\/core_pattern/);
      assert.doesNotMatch(text, /ALLOWED/, text);
    });

    test("a nested user or mount namespace gives no way around it either", async () => {
      const text = await run(
        [
          `unshare -m sh -c 'mount -o remount,bind,rw / && echo x > ${outside}/nested-m.txt' 2>&1`,
          `unshare -Urm sh -c 'mount -o remount,bind,rw / && echo x > ${outside}/nested-u.txt; umount -l ${crowHome}/.env; cat ${crowHome}/.env' 2>&1`,
          "echo done",
        ].join("; "),
      );
      assert.match(text, /done/);
      assert.doesNotMatch(text, new RegExp(SECRET));
      assert.equal(existsSync(path.join(outside, "nested-m.txt")), false, text);
      assert.equal(existsSync(path.join(outside, "nested-u.txt")), false, text);
      assert.equal(await readFile(path.join(crowHome, ".env"), "utf8"), `OPENAI_API_KEY=${SECRET}\n`);
    });
  });
}
