/**
 * The folder-order rule of scripts/check-layers.mjs (issue #28 point 4, part of `npm run check`): run on a temp tree,
 * an import from a lower folder to a higher one fails the check with a message naming both files, the same tree with
 * the arrow pointing down passes, and a folder the order does not place fails until it is given its place; crow-mcp
 * has its own order (issue 51 item 4).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";

const script = path.resolve(import.meta.dirname, "../../../scripts/check-layers.mjs");
let tree: string;

/** A packages/core/src with llm/ and runtime/; `llmImportsRuntime` adds the back-arrow llm → runtime. */
async function writeTree(llmImportsRuntime: boolean): Promise<void> {
  const src = path.join(tree, "packages/core/src");
  await mkdir(path.join(src, "llm"), { recursive: true });
  await mkdir(path.join(src, "runtime"), { recursive: true });
  await writeFile(
    path.join(src, "runtime/turn.ts"),
    'import { request } from "../llm/client.js";\nexport const turn = request;\n',
  );
  await writeFile(
    path.join(src, "llm/client.ts"),
    llmImportsRuntime
      ? 'import type { Options } from "../runtime/options.js";\nexport const request = (o: Options) => o;\n'
      : "export const request = (o: unknown) => o;\n",
  );
  await writeFile(path.join(src, "runtime/options.ts"), "export type Options = { model: string };\n");
}

function check(...args: string[]): { status: number | null; stderr: string } {
  const result = spawnSync(process.execPath, [script, "--root", tree, ...args], { encoding: "utf8" });
  return { status: result.status, stderr: result.stderr };
}

before(async () => {
  tree = await mkdtemp(path.join(tmpdir(), "crow-folder-order-"));
});
after(async () => {
  await rm(tree, { recursive: true, force: true });
});

test("an import from a lower folder to a higher one fails the folder-order check", async () => {
  await writeTree(true);
  const { status, stderr } = check();
  assert.equal(status, 1);
  assert.match(stderr, /packages\/core\/src\/llm\/client\.ts imports runtime\/options\.ts: llm is below runtime/);
});

test("a folder with no place in the order fails the check, naming it", async () => {
  await writeTree(false);
  await mkdir(path.join(tree, "packages/core/src/misc"), { recursive: true });
  await writeFile(path.join(tree, "packages/core/src/misc/helper.ts"), "export const helper = 1;\n");
  try {
    const { status, stderr } = check();
    assert.equal(status, 1);
    assert.match(stderr, /packages\/core\/src\/misc has no place in the folder order/);
  } finally {
    await rm(path.join(tree, "packages/core/src/misc"), { recursive: true, force: true });
  }
});

test("imports that point down pass the folder-order check", async () => {
  await writeTree(false);
  const { status, stderr } = check();
  assert.equal(status, 0, stderr);
});

test("crow-mcp has a folder order too: sandbox/ importing tools/ fails, tools/ importing sandbox/ passes", async () => {
  const mcp = path.join(tree, "packages/mcp/src");
  await mkdir(path.join(mcp, "sandbox"), { recursive: true });
  await mkdir(path.join(mcp, "tools"), { recursive: true });
  await writeFile(path.join(mcp, "tools/read.ts"), "export const read = 1;\n");
  try {
    await writeFile(
      path.join(mcp, "sandbox/policy.ts"),
      'import { read } from "../tools/read.js";\nexport const p = read;\n',
    );
    const up = check();
    assert.equal(up.status, 1);
    assert.match(up.stderr, /packages\/mcp\/src\/sandbox\/policy\.ts imports tools\/read\.ts: sandbox is below tools/);
    await writeFile(path.join(mcp, "sandbox/policy.ts"), "export const p = 1;\n");
    await writeFile(
      path.join(mcp, "tools/read.ts"),
      'import { p } from "../sandbox/policy.js";\nexport const read = p;\n',
    );
    await writeTree(false);
    const down = check();
    assert.equal(down.status, 0, down.stderr);
    await writeFile(path.join(mcp, "helpers.ts"), "export const h = 1;\n");
    const unplaced = check();
    assert.equal(unplaced.status, 1);
    assert.match(unplaced.stderr, /packages\/mcp\/src\/helpers\.ts has no place in the folder order/);
  } finally {
    await rm(path.join(tree, "packages/mcp"), { recursive: true, force: true });
  }
});
