import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { openStore, renderTemplate, type Store, SYSTEM_PROMPT_NAME } from "@crow/core";
import {
  DEFAULT_SYSTEM_PROMPT,
  directoryTree,
  isIgnored,
  parseGitignore,
  prepareSystemPrompt,
  reproduceSystemPrompt,
} from "@crow/core/internal";

async function tempDir(prefix: string): Promise<string> {
  return mkdtemp(path.join(tmpdir(), prefix));
}

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [rel, content] of Object.entries(files)) {
    const file = path.join(root, rel);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
}

describe("gitignore matching", () => {
  const rules = parseGitignore(
    ["# comment", "", "*.log", "!keep.log", "/secret.txt", "tmp/", "docs/**/draft.md", "**/cache", "a/*/c"].join("\n"),
  );
  const cases: Array<[string, boolean, boolean]> = [
    ["app.log", false, true],
    ["src/deep/app.log", false, true],
    ["keep.log", false, false],
    ["secret.txt", false, true],
    ["src/secret.txt", false, false],
    ["tmp", true, true],
    ["tmp", false, false],
    ["src/tmp", true, true],
    ["docs/draft.md", false, true],
    ["docs/x/y/draft.md", false, true],
    ["other/draft.md", false, false],
    ["x/cache", true, true],
    ["a/b/c", false, true],
    ["a/b/d/c", false, false],
    ["readme.md", false, false],
  ];
  for (const [rel, dir, expected] of cases) {
    test(`${rel}${dir ? "/" : ""} → ${expected ? "ignored" : "kept"}`, () => {
      assert.equal(isIgnored(rules, rel, dir), expected);
    });
  }

  test("a nested .gitignore applies below its own directory only", () => {
    const nested = parseGitignore("/gen\n*.tmp", "pkg");
    assert.equal(isIgnored(nested, "pkg/gen", true), true);
    assert.equal(isIgnored(nested, "pkg/sub/gen", true), false);
    assert.equal(isIgnored(nested, "pkg/sub/x.tmp", false), true);
    assert.equal(isIgnored(nested, "gen", true), false);
    assert.equal(isIgnored(nested, "x.tmp", false), false);
  });
});

describe("directory tree", () => {
  let root = "";
  before(async () => {
    root = await tempDir("crow-tree-");
    await put(root, {
      "README.md": "# hi\n",
      "src/index.ts": "",
      "src/lib/util.ts": "",
      "src/lib/deep/deeper/too-deep.ts": "",
      "node_modules/left-pad/index.js": "",
      ".git/HEAD": "",
      "dist/out.js": "",
      "app.log": "",
      ".gitignore": "*.log\ngenerated/\n",
      "generated/big.json": "",
      "pkg/.gitignore": "local.txt\n",
      "pkg/local.txt": "",
      "pkg/kept.txt": "",
    });
  });
  after(() => rm(root, { recursive: true, force: true }));

  test("lists the workspace three levels deep, directories first, without ignored entries", async () => {
    const tree = await directoryTree(root);
    assert.equal(tree.truncated, false);
    const lines = tree.text.split("\n");
    assert.equal(lines[0], `${root}/`);
    // Indented two spaces a level (box drawing cost ~80 % more tokens), directories first, each with a "/".
    assert.equal(
      tree.text,
      [`${root}/`, "  pkg/", "    .gitignore", "    kept.txt", "  src/", "    lib/", "      deep/", "      util.ts"]
        .concat(["    index.ts", "  .gitignore", "  README.md"])
        .join("\n"),
    );
    assert.doesNotMatch(tree.text, /deeper/, "level 4 is not listed");
    for (const hidden of ["node_modules", ".git/", "dist", "app.log", "generated", "local.txt"]) {
      assert.ok(!tree.text.includes(hidden), `${hidden} should be hidden:\n${tree.text}`);
    }
    assert.ok(tree.text.includes(".gitignore"), "dotfiles that are not ignored are listed");
  });

  test("caps: a huge directory is cut with a note and the top level stays complete", async () => {
    const big = await tempDir("crow-tree-big-");
    try {
      const files: Record<string, string> = { "zz-last-top.txt": "" };
      for (let i = 0; i < 300; i++) files[`aaa/file-${String(i).padStart(3, "0")}.txt`] = "";
      await put(big, files);
      const tree = await directoryTree(big, { maxEntries: 100, maxPerDirectory: 50 });
      assert.equal(tree.truncated, true);
      assert.ok(tree.entries <= 100);
      assert.match(tree.text, /zz-last-top\.txt/, "the top level is listed before deeper levels");
      assert.match(tree.text, /… 250 more/);
      assert.match(tree.text, /tree truncated at 100 entries/);
    } finally {
      await rm(big, { recursive: true, force: true });
    }
  });

  test("gitignore can be turned off, and a symlinked directory is listed but not entered", async () => {
    const dir = await tempDir("crow-tree-link-");
    try {
      await put(dir, { ".gitignore": "*.log\n", "a.log": "", "real/inside.txt": "" });
      await symlink(path.join(dir, "real"), path.join(dir, "link"));
      const tree = await directoryTree(dir, { gitignore: false });
      assert.match(tree.text, /a\.log/);
      assert.match(tree.text, /link\//);
      assert.equal(tree.text.split("inside.txt").length - 1, 1, "only the real directory is entered");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe("system prompt template", () => {
  let home = "";
  let ws = "";
  let store: Store;
  const now = new Date("2026-03-04T10:00:00Z");
  before(async () => {
    home = await tempDir("crow-home-");
    ws = await tempDir("crow-ws-");
    await put(ws, { "AGENTS.md": "Always run `make test`.\n", "main.go": "package main\n" });
    store = await openStore(path.join(home, "crow.db"));
  });
  after(async () => {
    await store.close();
    await rm(home, { recursive: true, force: true });
    await rm(ws, { recursive: true, force: true });
  });

  test("the built-in prompt carries the workspace, tree, AGENTS.md and date", async () => {
    const prepared = await prepareSystemPrompt(ws, { home, now });
    assert.equal(prepared.source, "built-in");
    assert.equal(prepared.promptId, null, "no store, no version");
    const text = prepared.systemPrompt;
    assert.ok(text.includes(ws));
    assert.match(text, /\n {2}main\.go\n/);
    assert.match(text, /Always run `make test`\./);
    assert.match(text, /2026-03-04/);
    assert.match(text, /absolute paths/);
    assert.doesNotMatch(text, /\{\{|\{%/, "no template syntax left");
    assert.doesNotMatch(text, /<SKILLS>/, "no skills section without a hint");
  });

  test("without AGENTS.md the prompt says so; upstream's variable keeps its literal", async () => {
    const empty = await tempDir("crow-ws-empty-");
    try {
      const prepared = await prepareSystemPrompt(empty, { home, now });
      assert.equal(prepared.promptArgs.agents_content, "No AGENTS.md found");
      assert.match(prepared.systemPrompt, /has no AGENTS\.md/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  test("the skills hint fills its slot", async () => {
    const prepared = await prepareSystemPrompt(ws, { home, now, skillsHint: "Skills: use discover_skills." });
    assert.match(prepared.systemPrompt, /<SKILLS>\nSkills: use discover_skills\.\n<\/SKILLS>/);
  });

  test("a user override in <home>/prompts/system_prompt.njk wins, with upstream's variables", async () => {
    const userHome = await tempDir("crow-home-user-");
    try {
      await put(userHome, {
        "prompts/system_prompt.njk":
          "Mine at {{ workspace }}.\n{% if has_agents_md %}AGENTS: {{ agents_content }}{% endif %}",
      });
      const prepared = await prepareSystemPrompt(ws, { home: userHome, now, store });
      assert.equal(prepared.source, path.join(userHome, "prompts", "system_prompt.njk"));
      assert.equal(prepared.systemPrompt, `Mine at ${ws}.\nAGENTS: Always run \`make test\`.`);
      assert.ok(prepared.promptId?.startsWith(`${SYSTEM_PROMPT_NAME}@`));
    } finally {
      await rm(userHome, { recursive: true, force: true });
    }
  });

  test("a broken user template falls back to the built-in one with a warning", async () => {
    const userHome = await tempDir("crow-home-bad-");
    try {
      await put(userHome, { "prompts/system_prompt.njk": "{% if %}broken" });
      const prepared = await prepareSystemPrompt(ws, { home: userHome, now });
      assert.equal(prepared.source, "built-in");
      assert.match(prepared.warning ?? "", /system_prompt\.njk could not be rendered/);
      assert.match(prepared.systemPrompt, /You are Crow/);
    } finally {
      await rm(userHome, { recursive: true, force: true });
    }
  });

  test("rendering never HTML-escapes", () => {
    assert.equal(renderTemplate("{{ x }}", { x: "<a & 'b'>" }), "<a & 'b'>");
  });
});

describe("prompt versions", () => {
  let home = "";
  let ws = "";
  let store: Store;
  before(async () => {
    home = await tempDir("crow-home-v-");
    ws = await tempDir("crow-ws-v-");
    await put(ws, { "a.txt": "" });
    store = await openStore(path.join(home, "crow.db"));
  });
  after(async () => {
    await store.close();
    await rm(home, { recursive: true, force: true });
    await rm(ws, { recursive: true, force: true });
  });

  test("same template → same version; a changed template → a new version; old sessions still reproduce", async () => {
    const first = await prepareSystemPrompt(ws, { home, store });
    const again = await prepareSystemPrompt(ws, { home, store });
    assert.equal(first.promptId, `${SYSTEM_PROMPT_NAME}@1`);
    assert.equal(again.promptId, first.promptId);

    const s1 = await store.createSession({
      cwd: ws,
      promptId: first.promptId,
      promptArgs: first.promptArgs,
      systemPrompt: first.systemPrompt,
    });

    await put(home, { "prompts/system_prompt.njk": "Custom prompt for {{ workspace }} on {{ date }}." });
    const changed = await prepareSystemPrompt(ws, { home, store });
    assert.equal(changed.promptId, `${SYSTEM_PROMPT_NAME}@2`);
    const s2 = await store.createSession({
      cwd: ws,
      promptId: changed.promptId,
      promptArgs: changed.promptArgs,
      systemPrompt: changed.systemPrompt,
    });
    // The workspace changes after the sessions were created: reproduction uses the stored arguments, not the disk.
    await put(ws, { "AGENTS.md": "new rules", "b.txt": "" });

    for (const id of [s1.id, s2.id]) {
      const record = await store.getSession(id);
      assert.ok(record);
      assert.equal(await reproduceSystemPrompt(store, record), record.systemPrompt);
    }
    const versions = await store.listPromptVersions(SYSTEM_PROMPT_NAME);
    assert.deepEqual(
      versions.map((v) => v.version),
      [1, 2],
    );
    assert.equal(versions[0]?.content, DEFAULT_SYSTEM_PROMPT);
  });
});
