import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import module from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { CROW_BIN, CROW_MCP_BIN } from "@crow/testkit";

const hasCompileCache = typeof (module as { enableCompileCache?: unknown }).enableCompileCache === "function";

function version(bin: string, cacheHome: string) {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: cacheHome };
  delete env.NODE_COMPILE_CACHE;
  delete env.NODE_DISABLE_COMPILE_CACHE;
  return spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8", env });
}

test("both executables fill the compile cache under the user's cache directory", {
  skip: hasCompileCache ? false : `Node ${process.version} has no module.enableCompileCache`,
}, async () => {
  const cacheHome = await mkdtemp(path.join(tmpdir(), "crow-cache-"));
  try {
    for (const bin of [CROW_BIN, CROW_MCP_BIN]) assert.equal(version(bin, cacheHome).status, 0);
    const dir = path.join(cacheHome, "crow", "compile-cache");
    assert.ok(existsSync(dir), "crow/compile-cache was created");
    const [perNode] = readdirSync(dir);
    assert.ok(perNode && readdirSync(path.join(dir, perNode)).length > 0, "compiled code was written");
  } finally {
    await rm(cacheHome, { recursive: true, force: true });
  }
});

test("an unusable cache directory changes nothing: same output, exit 0, nothing on stderr", async () => {
  const tmp = await mkdtemp(path.join(tmpdir(), "crow-cache-"));
  try {
    // A regular file where the cache directory's parent should be: it cannot be created, even as root.
    const file = path.join(tmp, "not-a-dir");
    await writeFile(file, "");
    for (const bin of [CROW_BIN, CROW_MCP_BIN]) {
      const ran = version(bin, file);
      assert.equal(ran.status, 0, ran.stderr);
      assert.match(ran.stdout, /^\d+\.\d+\.\d+\n$/);
      assert.equal(ran.stderr, "");
    }
  } finally {
    await rm(tmp, { recursive: true, force: true });
  }
});
