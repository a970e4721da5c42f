/**
 * The optional folder-order rule of scripts/check-layers.mjs (issue #28 point 4): run on a temp tree, an import from a
 * lower folder to a higher one fails the check with a message naming both files, and the same tree with the arrow
 * pointing down passes. Without `--folder-order` the rule is off.
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
  const { status, stderr } = check("--folder-order");
  assert.equal(status, 1);
  assert.match(stderr, /packages\/core\/src\/llm\/client\.ts imports runtime\/options\.ts: llm is below runtime/);
});

test("the same back-arrow passes when the rule is off", async () => {
  await writeTree(true);
  assert.equal(check().status, 0);
});

test("imports that point down pass the folder-order check", async () => {
  await writeTree(false);
  const { status, stderr } = check("--folder-order");
  assert.equal(status, 0, stderr);
});
