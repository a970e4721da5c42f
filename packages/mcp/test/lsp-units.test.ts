// The pure parts of the language-server diagnostics: which language a file is, what counts as new, how it reads.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { type Diagnostic, formatSection, summarizeChange } from "../src/lsp/diagnostics.js";
import { languageOf, languagesFor, parseLspSettings } from "../src/lsp/languages.js";
import { serverSearchPath } from "../src/lsp/launch.js";

const d = (file: string, message: string, line = 1, severity: Diagnostic["severity"] = "error"): Diagnostic => ({
  file,
  line,
  column: 1,
  severity,
  code: "E",
  message,
});

describe("languages", () => {
  test("file patterns: a name pattern matches anywhere, a path pattern from the workspace", () => {
    const all = languagesFor(undefined);
    assert.equal(languageOf("/ws/src/a.tsx", "/ws", all)?.name, "typescript");
    assert.equal(languageOf("/ws/a.mjs", "/ws", all)?.languageId("/ws/a.mjs"), "javascript");
    assert.equal(languageOf("/ws/m.py", "/ws", all)?.name, "python");
    assert.equal(languageOf("/ws/README.md", "/ws", all), undefined);
    const own = languagesFor({ languages: { typescript: { files: ["src/**/*.ts"] } } });
    assert.equal(languageOf("/ws/src/deep/a.ts", "/ws", own)?.name, "typescript");
    assert.equal(languageOf("/ws/scripts/a.ts", "/ws", own), undefined);
  });

  test("settings: off everywhere, off for one, a command instead, a language of one's own; the process's off (CROW_LSP=off) wins", () => {
    assert.deepEqual(languagesFor({ off: true }), []);
    assert.deepEqual(languagesFor(undefined, { off: true }), []);
    assert.deepEqual(languagesFor({ off: false }, { off: true }), []);
    const names = languagesFor({
      languages: {
        python: { off: true },
        go: { command: "/opt/gopls" },
        ruby: { command: "solargraph", files: ["*.rb"] },
      },
    }).map((l) => [l.name, l.commands.join(",")]);
    assert.deepEqual(names, [
      ["typescript", "typescript-language-server"],
      ["go", "/opt/gopls"],
      ["rust", "rust-analyzer"],
      ["ruby", "solargraph"],
    ]);
  });

  test("the settings sent in initialize's _meta: malformed parts are left out", () => {
    assert.equal(parseLspSettings("off"), undefined);
    assert.deepEqual(parseLspSettings({ languages: { go: { command: 7, args: ["-x"] } }, waitMs: -1 }), {
      off: false,
      languages: { go: { args: ["-x"] } },
    });
  });
});

describe("what a change did", () => {
  test("new means not there before, whatever line it moved to; a duplicate of an old one is new", () => {
    const before = [d("/ws/a.ts", "old", 3)];
    const after = [d("/ws/a.ts", "old", 5), d("/ws/a.ts", "old", 9), d("/ws/b.ts", "broke", 2)];
    const meta = summarizeChange("typescript", before, after);
    assert.deepEqual(
      meta?.added.map((x) => [x.file, x.line]),
      [
        ["/ws/a.ts", 9],
        ["/ws/b.ts", 2],
      ],
    );
  });

  test("nothing new and nothing fixed: nothing to say; every error gone: how many", () => {
    assert.equal(summarizeChange("python", [], []), undefined);
    assert.equal(summarizeChange("python", [d("/a.py", "x")], [d("/a.py", "x")]), undefined);
    const fixed = summarizeChange("python", [d("/a.py", "x"), d("/a.py", "y")], [d("/a.py", "w", 1, "warning")]);
    assert.equal(
      formatSection(fixed ?? { language: "", added: [], total: 0, fixed: 0 }, "/"),
      "Diagnostics (python) this change introduced: 1 warning\na.py:1:1 warning E: w\nAll 2 errors reported before this change are fixed.",
    );
  });

  test("capped: 20 errors, 5 warnings, hints never; the section stays under 4 KB and says how many it left out", () => {
    const after = [
      ...Array.from({ length: 30 }, (_, i) => d("/ws/a.ts", `error ${i} ${"x".repeat(250)}`, i + 1)),
      ...Array.from({ length: 8 }, (_, i) => d("/ws/a.ts", `warning ${i}`, i + 1, "warning")),
      d("/ws/a.ts", "unused", 1, "hint"),
    ];
    const meta = summarizeChange("typescript", [], after);
    assert.ok(meta);
    assert.equal(meta.added.filter((x) => x.severity === "error").length, 20);
    assert.equal(meta.added.filter((x) => x.severity === "warning").length, 5);
    assert.equal(meta.total, 38);
    const text = formatSection(meta, "/ws");
    assert.ok(text.length <= 4100, String(text.length));
    assert.match(
      text,
      /^Diagnostics \(typescript\) this change introduced: 30 errors, 8 warnings\na\.ts:1:1 error E: error 0 /,
    );
    assert.match(text, /\(\d+ more not shown\)$/);
  });
});

describe("serverSearchPath: what a confined server must see", () => {
  test("the node_modules tree it was found in, then the session's PATH (its node); a server of its own: its folder", () => {
    assert.equal(
      serverSearchPath("/tmp/tree/node_modules/.bin/srv", "/w", "/opt/node/bin:/usr/bin"),
      "/tmp/tree/node_modules:/opt/node/bin:/usr/bin",
    );
    assert.equal(serverSearchPath("/tmp/tools/gopls", "/w", undefined), "/tmp/tools");
  });

  test("a link planted in the workspace opens nothing: found inside the workspace, only PATH is added", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "crow-lsp-path-"));
    try {
      // The session's link from its workspace to a tree elsewhere under /tmp (another project's, another user's).
      mkdirSync(path.join(dir, "elsewhere", "node_modules", "srv"), { recursive: true });
      writeFileSync(path.join(dir, "elsewhere", "node_modules", "srv", "cli.mjs"), "");
      mkdirSync(path.join(dir, "ws", "node_modules", ".bin"), { recursive: true });
      symlinkSync(
        path.join(dir, "elsewhere", "node_modules", "srv", "cli.mjs"),
        path.join(dir, "ws", "node_modules", ".bin", "srv"),
      );
      const found = path.join(dir, "ws", "node_modules", ".bin", "srv");
      assert.equal(serverSearchPath(found, path.join(dir, "ws"), "/usr/bin"), "/usr/bin");
      assert.equal(serverSearchPath(found, path.join(dir, "ws"), undefined), "");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
