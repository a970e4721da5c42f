/**
 * Several processes opening one new SQLite database at the same moment (an editor's agent, `crow sessions serve`,
 * a second `crow run`) must all end up with a migrated store: before, each ran the first migration and the losers
 * failed with "table prompts already exists".
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, test } from "node:test";
import { openStore } from "@crow/core";

const dirs: string[] = [];
after(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** Opens the store in a fresh Node process (the built @crow/core) once `go` exists, so all processes start together. */
function openInChild(file: string, go: string): Promise<{ code: number | null; stderr: string }> {
  const script = `
    import { existsSync } from "node:fs";
    import { openStore } from "@crow/core";
    while (!existsSync(${JSON.stringify(go)})) await new Promise((r) => setTimeout(r, 2));
    const store = await openStore(${JSON.stringify(`sqlite:///${file}`)});
    await store.close();
  `;
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      cwd: path.resolve(import.meta.dirname, ".."),
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("close", (code) => resolve({ code, stderr }));
  });
}

test("processes opening a new SQLite database at once all get a migrated store", async () => {
  for (let round = 0; round < 3; round++) {
    const dir = await mkdtemp(path.join(tmpdir(), "crow-concurrent-open-"));
    dirs.push(dir);
    const file = path.join(dir, "crow.db");
    const go = path.join(dir, "go");
    const children = Array.from({ length: 4 }, () => openInChild(file, go));
    await new Promise((r) => setTimeout(r, 300));
    await (await import("node:fs/promises")).writeFile(go, "");
    const results = await Promise.all(children);
    for (const { code, stderr } of results) assert.equal(code, 0, `a process failed to open the store: ${stderr}`);
    const store = await openStore(`sqlite:///${file}`);
    try {
      const session = await store.createSession({ cwd: dir });
      assert.ok(session.id, "the migrated store takes a session");
    } finally {
      await store.close();
    }
  }
});
