/**
 * The file tools against a racing shell, from the model's seat: crow-mcp under real bubblewrap, a loop started in
 * its sandboxed terminal swaps a workspace link between a harmless target and one the tools must not touch (Crow's
 * hidden `.env`, a directory or a file outside the workspace), while `read`, `write` and `edit` go through the link
 * again and again. A check of the path followed by a second lookup loses that race; the tools hold a descriptor.
 * As root and as an unprivileged user (uid 65534). Needs bwrap and perl (the swapping loop: rename(2) is atomic).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, chown, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { connectStdio, type McpConnection, SWAP_LINK_PERL, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

const SECRET = "sk-race-secret-0123456789";
const ATTEMPTS = 200;
const isRoot = process.getuid?.() === 0;

for (const uid of [0, 65534]) {
  // bwrap and perl are not optional here (CI installs bwrap): a skipped sandbox test proves nothing.
  const skip = uid !== 0 && !isRoot ? "needs root to switch to the nobody user" : false;

  describe(`a racing link in the sandboxed shell does not steer read, write or edit (uid ${uid})`, { skip }, () => {
    let ws: TempWorkspace;
    let outside: string;
    let crowHome: string;
    let mcp: McpConnection;
    let policy: Record<string, unknown>;
    let loops = 0;

    async function call(tool: string, args: Record<string, unknown>) {
      const result = (await mcp.client.callTool({
        name: tool,
        arguments: args,
        _meta: { "crow/sandbox": policy },
      })) as CallToolResult;
      const text = result.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("");
      return { text, isError: result.isError === true };
    }

    /** Starts the swapping loop in the sandboxed shell and waits until it runs; returns how to stop it. */
    async function startSwapping(name: string, a: string, b: string): Promise<() => Promise<void>> {
      const id = ++loops;
      const ready = ws.path(`.ready-${id}`);
      const stop = ws.path(`.stop-${id}`);
      const script = ws.path(`.swap-${id}.pl`);
      await writeFile(script, SWAP_LINK_PERL);
      const command = `perl ${script} ${ws.path(name)} ${a} ${b} ${ready} ${stop} >${ws.path(`.swap-${id}.log`)} 2>&1 &`;
      const started = await call("terminal", { command });
      assert.equal(started.isError, false, started.text);
      for (let waited = 0; !existsSync(ready); waited++) {
        assert.ok(
          waited < 6000,
          `the swapping loop never started: ${await readFile(ws.path(`.swap-${id}.log`), "utf8").catch(() => "")}`,
        );
        await sleep(10);
      }
      return async () => {
        await writeFile(stop, "");
      };
    }

    before(async () => {
      ws = await tempWorkspace("crow-race-");
      crowHome = await mkdtemp(path.join("/var/tmp", "crow-race-home-"));
      outside = await mkdtemp(path.join("/var/tmp", "crow-race-outside-"));
      await writeFile(path.join(crowHome, ".env"), `OPENAI_API_KEY=${SECRET}\n`, { mode: 0o600 });
      await writeFile(path.join(outside, "bashrc"), "AAA original bashrc\n");
      await mkdir(path.join(outside, "dir"));
      await writeFile(path.join(outside, "dir", "e.txt"), "AAA outside\n");
      await ws.write("harmless.txt", "harmless text\n");
      await ws.write("target.txt", "AAA target\n");
      await ws.write("inner/e.txt", "AAA inner\n");
      await chmod(outside, 0o755);
      for (const dir of [ws.dir, crowHome, outside]) {
        spawnSync("chown", ["-R", `${uid}:${uid}`, dir]);
      }
      await chown(crowHome, uid, uid);
      policy = {
        mode: "workspace-write",
        writable: [ws.dir],
        readOnly: [crowHome],
        network: false,
        hidden: [path.join(crowHome, ".env")],
      };
      mcp = await connectStdio({
        cwd: ws.dir,
        args: ["--sandbox", "workspace-write"],
        ...(uid === 0 ? {} : { uid, gid: uid }),
      });
    });
    after(async () => {
      await mcp?.close();
      await ws?.cleanup();
      await rm(crowHome, { recursive: true, force: true });
      await rm(outside, { recursive: true, force: true });
    });

    test(`read: ${ATTEMPTS} reads of a link swapping to the hidden .env never return the key`, async (t) => {
      const stopSwapping = await startSwapping("x", ws.path("harmless.txt"), path.join(crowHome, ".env"));
      const seen = { harmless: 0, refused: 0, other: 0 };
      try {
        for (let i = 0; i < ATTEMPTS; i++) {
          const result = await call("read", { file_path: ws.path("x") });
          assert.doesNotMatch(result.text, new RegExp(SECRET), `read ${i} returned the key`);
          if (/harmless text/.test(result.text)) seen.harmless++;
          else if (/hidden from tools/.test(result.text)) seen.refused++;
          else seen.other++;
        }
      } finally {
        await stopSwapping();
      }
      t.diagnostic(`read outcomes: ${JSON.stringify(seen)}`);
    });

    test(`write: ${ATTEMPTS} writes through a directory link swapping outside never land outside`, async () => {
      const stopSwapping = await startSwapping("d", ws.path("inner"), path.join(outside, "dir"));
      try {
        for (let i = 0; i < ATTEMPTS; i++) {
          await call("write", { file_path: ws.path("d/new.txt"), content: `pwned ${i}\n` });
        }
      } finally {
        await stopSwapping();
      }
      assert.deepEqual((await readdir(path.join(outside, "dir"))).sort(), ["e.txt"]);
      assert.equal(await readFile(path.join(outside, "dir", "e.txt"), "utf8"), "AAA outside\n");
      assert.match(await ws.read("inner/new.txt"), /^pwned \d+\n$/, "writes inside the workspace still happen");
    });

    test(`write: ${ATTEMPTS} writes through a file link swapping to ~/.bashrc never replace it`, async () => {
      const victim = path.join(outside, "bashrc");
      const before = await stat(victim);
      const stopSwapping = await startSwapping("l", ws.path("target.txt"), victim);
      try {
        for (let i = 0; i < ATTEMPTS; i++) {
          await call("write", { file_path: ws.path("l"), content: `AAA pwned ${i}\n` });
        }
      } finally {
        await stopSwapping();
      }
      assert.equal(await readFile(victim, "utf8"), "AAA original bashrc\n");
      assert.equal((await stat(victim)).ino, before.ino, "the victim was not replaced");
      assert.deepEqual((await readdir(outside)).sort(), ["bashrc", "dir"]);
    });

    test(`edit: ${ATTEMPTS} edits through swapping file and directory links never change a file outside`, async () => {
      // Fresh victims: this test stands on its own whatever the ones before it did.
      const victim = path.join(outside, "bashrc");
      await rm(outside, { recursive: true, force: true });
      await mkdir(path.join(outside, "dir"), { recursive: true });
      await writeFile(victim, "AAA original bashrc\n");
      await writeFile(path.join(outside, "dir", "e.txt"), "AAA outside\n");
      spawnSync("chown", ["-R", `${uid}:${uid}`, outside]);
      await writeFile(ws.path("target.txt"), "AAA target\n");
      for (const [name, a, b, file] of [
        ["m", ws.path("target.txt"), victim, ws.path("m")],
        ["n", ws.path("inner"), path.join(outside, "dir"), ws.path("n/e.txt")],
      ] as const) {
        const stopSwapping = await startSwapping(name, a, b);
        try {
          for (let i = 0; i < ATTEMPTS / 2; i++) {
            const [from, to] = i % 2 === 0 ? ["AAA", "BBB"] : ["BBB", "AAA"];
            await call("edit", { file_path: file, old_string: from, new_string: to });
          }
        } finally {
          await stopSwapping();
        }
      }
      assert.equal(await readFile(victim, "utf8"), "AAA original bashrc\n");
      assert.equal(await readFile(path.join(outside, "dir", "e.txt"), "utf8"), "AAA outside\n");
      assert.deepEqual((await readdir(path.join(outside, "dir"))).sort(), ["e.txt"]);
      assert.deepEqual((await readdir(outside)).sort(), ["bashrc", "dir"]);
    });
  });
}
