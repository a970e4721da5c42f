// A structural guard on every place Crow runs git (packages/*/src): git is spawned only through the two runners that
// set its environment (the skills' git.ts, the checkpoints' git.ts), and every argument list handed to a runner keeps
// values from data out of option position. An operand that is not a string literal must follow "--", be the value
// of an option that takes one ("-C", "-m", "--depth"), be an option with its value attached (`--prune=${…}`), be a
// module constant (SCREAMING_CASE), or be checked by objectId() (full hex, never an option). A new call that hands git a bare variable fails here with its
// file and line; eval runs no git at all.
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
const RUNNERS = new Set(["packages/agent/src/skill-installer/git.ts", "packages/core/src/checkpoints/git.ts"]);
/** Options whose next argument is their value. */
const TAKES_VALUE = new Set(["-C", "-m", "--depth"]);

function sources(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith(".ts")) found.push(full);
    }
  };
  for (const pkg of readdirSync(path.join(root, "packages"))) {
    try {
      walk(path.join(root, "packages", pkg, "src"));
    } catch {
      // A package without src.
    }
  }
  return found;
}

/** The top-level elements of the array literal starting at `open` (the index of "["), and where it ends. */
function arrayElements(text: string, open: number): { elements: string[]; end: number } {
  const elements: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let current = "";
  for (let i = open; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      current += c;
      if (c === "\\") {
        current += text[i + 1] ?? "";
        i++;
      } else if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === "'" || c === "`") {
      quote = c;
      current += c;
      continue;
    }
    if (c === "[" || c === "(" || c === "{") {
      depth++;
      if (depth === 1) continue;
    }
    if (c === "]" || c === ")" || c === "}") {
      depth--;
      if (depth === 0) {
        if (current.trim() !== "") elements.push(current.trim());
        return { elements, end: i };
      }
    }
    if (c === "," && depth === 1) {
      elements.push(current.trim());
      current = "";
      continue;
    }
    current += c;
  }
  throw new Error("unterminated array");
}

const isLiteral = (e: string) => /^"[^"]*"$/.test(e) || /^'[^']*'$/.test(e) || /^`[^`$]*`$/.test(e);
const literalValue = (e: string) => e.slice(1, -1);

/** Why the argument list `elements` may hand git an option from data, or undefined. */
function unsafeOperand(elements: string[]): string | undefined {
  let afterDashDash = false;
  for (let i = 0; i < elements.length; i++) {
    const e = elements[i] as string;
    if (isLiteral(e)) {
      if (literalValue(e) === "--") afterDashDash = true;
      continue;
    }
    if (afterDashDash) continue;
    const previous = elements[i - 1];
    if (previous && isLiteral(previous) && TAKES_VALUE.has(literalValue(previous))) continue;
    if (/^`-[\w-]+=/.test(e)) continue;
    // A module constant (MAIN = "refs/heads/main"): written in the source, not read from data.
    if (/^[A-Z][A-Z0-9_]*$/.test(e)) continue;
    if (/^objectId\(/.test(e) || /^`\$\{objectId\(/.test(e)) continue;
    return e;
  }
  return undefined;
}

test("git runs only through its two runners, and no argument list hands it an unchecked operand before --", () => {
  const problems: string[] = [];
  let calls = 0;
  for (const file of sources()) {
    const rel = path.relative(root, file).split(path.sep).join("/");
    const text = readFileSync(file, "utf8");
    const line = (index: number) => text.slice(0, index).split("\n").length;
    // A process started with "git" (or a resolved git program) anywhere but the runners.
    const spawnGit =
      /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execSync)\(\s*("git"|'git'|`git|(?:git|program)\.file\b|git\b)/g;
    for (const match of text.matchAll(spawnGit)) {
      if (!RUNNERS.has(rel)) problems.push(`${rel}:${line(match.index)}: starts git outside the runners`);
    }
    // Argument lists handed to a runner: git([…]), this.git([…]), runGit(program, dir, dir, […]).
    const call = /\b(?:this\.)?git\(\s*\[|\brunGit\([^[]*?\[/g;
    for (const match of text.matchAll(call)) {
      const open = match.index + match[0].length - 1;
      const { elements } = arrayElements(text, open);
      calls++;
      const bad = unsafeOperand(elements);
      if (bad) problems.push(`${rel}:${line(match.index)}: ${bad} reaches git before "--" unchecked`);
    }
  }
  assert.ok(calls >= 15, `found only ${calls} git argument lists: has the runners' call shape changed?`);
  assert.deepEqual(problems, []);
});

test("the guard itself catches the shapes it is for", () => {
  // Source text of template literals, built so the linter does not take them for misplaced placeholders.
  const template = (inner: string) => `\`$\{${inner}\``;
  assert.equal(unsafeOperand(['"fetch"', '"-q"', "url", "ref"]), "url");
  assert.equal(unsafeOperand(['"fetch"', '"--"', "url", "ref"]), undefined);
  assert.equal(unsafeOperand(['"-C"', "repo", '"archive"', "commit"]), "commit");
  assert.equal(unsafeOperand(['"rev-parse"', template("objectId(commit)}^{tree}")]), undefined);
  assert.equal(unsafeOperand(['"gc"', `\`--prune=$\{pruneAgo}\``]), undefined);
  assert.equal(unsafeOperand(['"cat-file"', template("ref}^{commit}")]), template("ref}^{commit}"));
  assert.equal(unsafeOperand(['"commit-tree"', '"-m"', "message", "objectId(tree)"]), undefined);
});
