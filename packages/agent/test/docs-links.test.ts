/**
 * The README is a front page and the rest lives in docs/*.md: a reader follows links between them. Every relative
 * link and `#anchor` in README.md and docs/*.md must lead somewhere — the file exists, and the anchor is a heading
 * (by GitHub's slug rules) or an `<a id>` of the page it names — so a section renamed or moved cannot leave a link
 * pointing at nothing.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { brokenLinks, docPages, linkTargets, slugs } from "./docs-helpers.js";

const repoRoot = path.resolve(import.meta.dirname, "../../..");

test("every relative link and #anchor in README.md and docs/*.md leads somewhere", () => {
  const all = docPages(repoRoot);
  assert.ok(all.length >= 10, `only ${all.length} pages found`);
  const counted = all.flatMap((page) => linkTargets(readFileSync(path.join(repoRoot, page), "utf8")));
  assert.ok(counted.length > 50, `only ${counted.length} links found: did the pattern stop matching?`);
  assert.deepEqual(
    all.flatMap((page) => brokenLinks(repoRoot, page)),
    [],
  );
});

test("the README links every page under docs/", () => {
  const readme = readFileSync(path.join(repoRoot, "README.md"), "utf8");
  const linked = new Set(linkTargets(readme).map((t) => t.split("#")[0]));
  const missing = docPages(repoRoot)
    .filter((p) => p !== "README.md")
    .filter((p) => !linked.has(p));
  assert.deepEqual(missing, [], "pages the README's table does not link");
});

test("GitHub's slugs: code, punctuation and a repeated heading", () => {
  const s = slugs(
    "# In an editor: `crow acp`\n## Harbor task schema 1.4\n## Checkpoints and /rewind\n## Differences from Harbor's Docker\n" +
      '## Zed\n## Zed\n```\n# not a heading\n```\n<a id="sandbox"></a>',
  );
  assert.deepEqual(
    [...s].sort(),
    [
      "checkpoints-and-rewind",
      "differences-from-harbors-docker",
      "harbor-task-schema-14",
      "in-an-editor-crow-acp",
      "sandbox",
      "zed",
      "zed-1",
    ].sort(),
  );
});

test("a missing page, a missing anchor and a link inside code are told apart", async () => {
  const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import("node:fs");
  const { tmpdir } = await import("node:os");
  const root = mkdtempSync(path.join(tmpdir(), "crow-docs-links-"));
  try {
    mkdirSync(path.join(root, "docs"));
    writeFileSync(path.join(root, "docs", "a.md"), "# Page A\n## Sandbox\n");
    writeFileSync(
      path.join(root, "README.md"),
      "[ok](docs/a.md#sandbox) [top](#readme) [gone](docs/b.md) [bad](docs/a.md#secrets) [web](https://x.y/#z)\n" +
        "`[code](docs/none.md)`\n```\n[fenced](docs/none.md)\n```\n# Readme\n",
    );
    assert.deepEqual(brokenLinks(root, "README.md"), [
      "README.md: docs/b.md: no such file",
      'README.md: docs/a.md#secrets: no heading or <a id> "secrets" in docs/a.md',
    ]);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
