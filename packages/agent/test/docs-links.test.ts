/**
 * The README is a front page and the rest lives in docs/*.md: a reader follows links between them. Every relative
 * link and `#anchor` in README.md and docs/*.md must lead somewhere — the file exists, and the anchor is a heading
 * (by GitHub's slug rules) or an `<a id>` of the page it names — so a section renamed or moved cannot leave a link
 * pointing at nothing.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";

const repoRoot = path.resolve(import.meta.dirname, "../../..");

/** The pages a reader moves between: the README and every Markdown page under docs/. */
function pages(): string[] {
  const docs = readdirSync(path.join(repoRoot, "docs"))
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f));
  return ["README.md", ...docs];
}

/** The text outside fenced code blocks and inline code spans: a link written inside code is an example, not a link. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "").replace(/`[^`\n]*`/g, "``");
}

/**
 * GitHub's anchor for a heading (github-slugger): the rendered text lower-cased, everything but letters, digits,
 * `_`, `-` and spaces removed, spaces made `-`; a repeated heading gets `-1`, `-2`….
 */
export function slugs(markdown: string): Set<string> {
  const found = new Set<string>();
  const seen = new Map<string, number>();
  const body = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
  for (const match of body.matchAll(/^#{1,6}[ \t]+(.+?)[ \t#]*$/gm)) {
    const rendered = (match[1] as string)
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
      .replace(/<[^>]+>/g, "")
      .replace(/[`*]/g, "");
    const base = rendered
      .toLowerCase()
      .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
      .replace(/ /g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  for (const match of markdown.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(match[1] as string);
  return found;
}

/** Every link target of a page's prose: `[text](target)`, `![alt](target)` and `<a href="target">`. */
export function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const targets = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] as string);
  for (const m of text.matchAll(/<a\s+href="([^"]+)"/g)) targets.push(m[1] as string);
  return targets;
}

/** What is wrong with each relative link of `page` (a path relative to `root`): a missing file or anchor. */
export function brokenLinks(root: string, page: string): string[] {
  const broken: string[] = [];
  const text = readFileSync(path.join(root, page), "utf8");
  for (const target of linkTargets(text)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto: …: not this repository's
    const [file, anchor] = target.split("#", 2) as [string, string | undefined];
    const resolved = file === "" ? path.join(root, page) : path.resolve(path.dirname(path.join(root, page)), file);
    if (!existsSync(resolved)) {
      broken.push(`${page}: ${target}: no such file`);
      continue;
    }
    if (anchor === undefined || anchor === "") continue;
    if (!resolved.endsWith(".md") || statSync(resolved).isDirectory()) {
      broken.push(`${page}: ${target}: an anchor into something that is not a Markdown page`);
    } else if (!slugs(readFileSync(resolved, "utf8")).has(anchor)) {
      broken.push(`${page}: ${target}: no heading or <a id> "${anchor}" in ${path.relative(root, resolved)}`);
    }
  }
  return broken;
}

test("every relative link and #anchor in README.md and docs/*.md leads somewhere", () => {
  const all = pages();
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
  const missing = pages()
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
