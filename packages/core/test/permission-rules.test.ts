import assert from "node:assert/strict";
import { linkSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import {
  type HookContext,
  type PermissionAnswer,
  type PermissionRequest,
  PermissionRuleError,
  type ToolKind,
} from "@crow/core";
import {
  commandParts,
  compilePermissionRules,
  matchPermissionRule,
  parsePermissionRule,
  permissionGate,
  ruleMatches,
  toolKind,
} from "@crow/core/internal";

const rule = (text: string) => parsePermissionRule(text, "deny");
const matches = (text: string, name: string, args: Record<string, unknown>, cwd?: string) =>
  ruleMatches(rule(text), name, args, cwd);

describe("permission rule syntax", () => {
  test("a tool name, a tool glob, or a tool with a pattern", () => {
    assert.equal(rule("terminal").pattern, undefined);
    assert.equal(rule("terminal(git push*)").pattern, "git push*");
    assert.equal(rule("  edit( /etc/** ) ").pattern, "/etc/**");
    assert.equal(rule(" edit(/etc/**) ").text, "edit(/etc/**)");
    // Parentheses inside the pattern belong to it (the last `)` closes the rule).
    assert.equal(rule("terminal(echo (a))").pattern, "echo (a)");
  });

  test("invalid rules say what is wrong and how to write one", () => {
    for (const bad of ["", "two words", "terminal(", "terminal()", "terminal(  )", "(x)", "a(b)c"]) {
      assert.throws(
        () => rule(bad),
        (error: unknown) =>
          error instanceof PermissionRuleError &&
          error.message.includes(`"${bad}"`) &&
          error.message.includes("terminal(git push*)"),
        bad,
      );
    }
  });
});

describe("permission rule matching", () => {
  test("tool globs: exact names, * and ?, whole name only", () => {
    assert.equal(matches("terminal", "terminal", {}), true);
    assert.equal(matches("terminal", "crow-mcp_terminal", {}), false);
    assert.equal(matches("*terminal", "crow-mcp_terminal", {}), true);
    assert.equal(matches("github_*", "github_create_issue", {}), true);
    assert.equal(matches("github_*", "gitlab_create_issue", {}), false);
    assert.equal(matches("*", "anything", {}), true);
    assert.equal(matches("rea?", "read", {}), true);
    assert.equal(matches("rea?", "reads", {}), false);
    assert.equal(matches("web.fetch", "web_fetch", {}), false, "a dot is literal");
  });

  test("command patterns: * spans spaces and slashes; any part of a compound command matches", () => {
    const push = "terminal(git push*)";
    assert.equal(matches(push, "terminal", { command: "git push origin main" }), true);
    assert.equal(matches(push, "terminal", { command: "  git push" }), true);
    assert.equal(matches(push, "terminal", { command: "git status" }), false);
    assert.equal(matches(push, "terminal", { command: "cd repo && git push -f" }), true);
    assert.equal(matches(push, "terminal", { command: "make; git push" }), true);
    assert.equal(matches(push, "terminal", { command: "false || git push" }), true);
    assert.equal(matches(push, "terminal", { command: "echo x | git push" }), true);
    assert.equal(matches(push, "terminal", { command: "echo 'git push'" }), false);
    assert.equal(matches("terminal(rm -rf /*)", "terminal", { command: "rm -rf /tmp/x" }), true);
    assert.equal(matches(push, "read", { command: "git push" }), false, "the tool must match too");
    assert.deepEqual(commandParts("a && b || c; d | e & f\ng"), ["a", "b", "c", "d", "e", "f", "g"]);
  });

  test("commands are compared with runs of whitespace collapsed: two spaces or a tab do not evade a rule", () => {
    const push = "terminal(git push*)";
    assert.equal(matches(push, "terminal", { command: "git  push origin" }), true);
    assert.equal(matches(push, "terminal", { command: "git\tpush" }), true);
    assert.equal(matches(push, "terminal", { command: "cd x &&  git \t push -f" }), true);
    assert.equal(matches("terminal(git  push*)", "terminal", { command: "git push" }), true, "the pattern too");
    assert.equal(matches(push, "terminal", { command: "git pushy" }), true);
    assert.equal(matches(push, "terminal", { command: "gitpush" }), false);
  });

  test("paths are matched as given and as their real path: a symlink does not get around a rule", () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "crow-rules-")));
    try {
      const ws = path.join(root, "ws");
      const secret = path.join(root, "protected");
      mkdirSync(ws);
      mkdirSync(secret);
      symlinkSync(secret, path.join(ws, "link"));
      symlinkSync(path.join(secret, "new-dir", "f"), path.join(ws, "dangling"));
      symlinkSync(ws, path.join(root, "ws-link"));
      const deny = `write(${secret}/**)`;
      assert.equal(matches(deny, "write", { file_path: "link/key.txt" }, ws), true, "through a linked directory");
      assert.equal(matches(deny, "write", { file_path: "link/a/b/new.txt" }, ws), true, "a file not there yet");
      assert.equal(matches(deny, "write", { file_path: "dangling" }, ws), true, "a dangling link is followed");
      assert.equal(matches(deny, "write", { file_path: "own.txt" }, ws), false);
      // The pattern's own directories are resolved too: a rule written through a link still applies.
      const viaLink = `write(${path.join(root, "ws-link")}/**)`;
      assert.equal(matches(viaLink, "write", { file_path: path.join(ws, "a.txt") }), true);
      // Allow rules need both forms: a link inside src/ does not carry src/'s permission elsewhere.
      const allow = parsePermissionRule("write(src/**)", "allow");
      mkdirSync(path.join(ws, "src"));
      symlinkSync(secret, path.join(ws, "src", "out"));
      assert.equal(ruleMatches(allow, "write", { file_path: "src/a.ts" }, ws), true);
      assert.equal(ruleMatches(allow, "write", { file_path: "src/out/a.ts" }, ws), false);
      assert.equal(ruleMatches(allow, "write", { file_path: "src/a.ts" }, path.join(root, "ws-link")), true);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("a hard link to a file a deny or ask rule names is caught by device and inode", () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "crow-rules-")));
    try {
      const ws = path.join(root, "ws");
      const keys = path.join(root, "keys");
      mkdirSync(ws);
      mkdirSync(path.join(keys, "deep"), { recursive: true });
      writeFileSync(path.join(keys, "key.txt"), "secret");
      writeFileSync(path.join(keys, "deep", "other.pem"), "secret");
      writeFileSync(path.join(ws, "own.txt"), "mine");
      linkSync(path.join(keys, "key.txt"), path.join(ws, "notes.txt"));
      linkSync(path.join(keys, "deep", "other.pem"), path.join(ws, "cert.txt"));
      linkSync(path.join(ws, "own.txt"), path.join(ws, "own-too.txt"));
      assert.equal(matches(`read(${keys}/key.txt)`, "read", { file_path: "notes.txt" }, ws), true, "a literal path");
      assert.equal(matches(`read(${keys}/**)`, "read", { file_path: "cert.txt" }, ws), true, "a glob");
      assert.equal(matches(`read(${keys}/**/*.pem)`, "read", { file_path: "notes.txt" }, ws), false, "not named");
      assert.equal(matches("read(secret/**)", "read", { file_path: "own-too.txt" }, ws), false);
      assert.equal(matches("read(own.txt)", "read", { file_path: "own-too.txt" }, ws), true, "a relative pattern");
      const ask = parsePermissionRule(`read(${keys}/key.txt)`, "ask");
      assert.equal(ruleMatches(ask, "read", { file_path: "notes.txt" }, ws), true, "ask rules too");
      // An allow rule is not borrowed by a link either way: it matches the path given, as before.
      const allow = parsePermissionRule(`read(${keys}/key.txt)`, "allow");
      assert.equal(ruleMatches(allow, "read", { file_path: "notes.txt" }, ws), false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test("absolute path patterns: ** spans directories, * and ? stay within one", () => {
    assert.equal(matches("edit(/etc/**)", "edit", { file_path: "/etc/hosts" }), true);
    assert.equal(matches("edit(/etc/**)", "edit", { file_path: "/etc/ssh/sshd_config" }), true);
    assert.equal(matches("edit(/etc/**)", "edit", { file_path: "/etcetera/x" }), false);
    assert.equal(matches("edit(/etc/*)", "edit", { file_path: "/etc/ssh/sshd_config" }), false);
    assert.equal(matches("edit(/etc/*)", "edit", { file_path: "/etc/hosts" }), true);
    assert.equal(matches("write(/srv/**/*.env)", "write", { file_path: "/srv/prod.txt" }), false);
    assert.equal(matches("write(/srv/**/*.env)", "write", { file_path: "/srv/prod.env" }), true);
    assert.equal(matches("write(/srv/**/*.env)", "write", { file_path: "/srv/a/b/prod.env" }), true);
    // `..` cannot walk around an absolute pattern: the path is normalized first.
    assert.equal(matches("edit(/etc/**)", "edit", { file_path: "/tmp/../etc/passwd" }), true);
    assert.equal(matches("read(~/.ssh/**)", "read", { file_path: `${os.homedir()}/.ssh/id_ed25519` }), true);
    assert.equal(matches("edit(/etc/**)", "edit", { path: "/etc/hosts" }), true, "`path` arguments count too");
  });

  test("relative path patterns match inside the working directory only", () => {
    const cwd = "/work/project";
    assert.equal(matches("write(src/**)", "write", { file_path: "/work/project/src/a/b.ts" }, cwd), true);
    assert.equal(matches("write(src/**)", "write", { file_path: "src/x.ts" }, cwd), true, "relative to cwd");
    assert.equal(matches("write(src/**)", "write", { file_path: "/work/project/lib/x.ts" }, cwd), false);
    assert.equal(matches("write(**)", "write", { file_path: "/work/project/x" }, cwd), true);
    assert.equal(matches("write(**)", "write", { file_path: "/work/other/x" }, cwd), false);
    assert.equal(matches("write(**)", "write", { file_path: "/work/project/../other/x" }, cwd), false);
    assert.equal(matches("write(*.md)", "write", { file_path: "/work/project/README.md" }, cwd), true);
    assert.equal(matches("write(*.md)", "write", { file_path: "/work/project/docs/a.md" }, cwd), false);
  });

  test("relative path patterns also match inside the session's additional directories (other workspace roots)", () => {
    const cwd = "/work/project";
    const roots = ["/work/shared-lib"];
    const hit = (file: string) => ruleMatches(rule("write(src/**)"), "write", { file_path: file }, cwd, roots);
    assert.equal(hit("/work/shared-lib/src/a.ts"), true);
    assert.equal(hit("/work/project/src/a.ts"), true);
    assert.equal(hit("/work/shared-lib/lib/a.ts"), false);
    assert.equal(hit("/work/elsewhere/src/a.ts"), false, "a path outside every root never matches");
    assert.equal(matches("write(src/**)", "write", { file_path: "/work/shared-lib/src/a.ts" }, cwd), false);
    const allow = parsePermissionRule("write(**)", "allow");
    assert.equal(matchPermissionRule([allow], "write", { file_path: "/work/shared-lib/x" }, cwd, roots), allow);
    assert.equal(matchPermissionRule([allow], "write", { file_path: "/work/other/x" }, cwd, roots), undefined);
  });

  test("URL patterns, and calls without a subject never match a pattern", () => {
    const rule = "web_fetch(https://intranet.example/*)";
    assert.equal(matches(rule, "web_fetch", { url: "https://intranet.example/a/b?c" }), true);
    assert.equal(matches(rule, "web_fetch", { url: "https://example.com/" }), false);
    assert.equal(matches("lookup(x*)", "lookup", { query: "xyz" }), false);
    assert.equal(matches("lookup", "lookup", { query: "xyz" }), true);
  });

  test("deny beats ask beats allow, whatever the order in the file", () => {
    const rules = compilePermissionRules({
      allow: ["terminal", "read"],
      ask: ["terminal(git *)"],
      deny: ["terminal(git push*)"],
    });
    const decide = (name: string, args: Record<string, unknown>) => matchPermissionRule(rules, name, args)?.text;
    assert.equal(decide("terminal", { command: "git push" }), "terminal(git push*)");
    assert.equal(decide("terminal", { command: "git status" }), "terminal(git *)");
    assert.equal(decide("terminal", { command: "ls" }), "terminal");
    assert.equal(decide("write", { file_path: "/x" }), undefined);
    assert.equal(matchPermissionRule(rules, "terminal", { command: "git push" })?.action, "deny");
  });
});

describe("the permission gate with rules", () => {
  const definition = (name: string) => ({
    type: "function" as const,
    function: { name, description: name, parameters: { type: "object" } },
  });
  const ctx = (): HookContext => ({ signal: new AbortController().signal, sessionId: "s" });

  function gateWith(mode: "code" | "ask" | "read-only", answers: PermissionAnswer[]) {
    const asked: PermissionRequest[] = [];
    const gate = permissionGate({
      mode: () => mode,
      rules: { allow: ["terminal(npm test*)"], ask: ["write(src/**)"], deny: ["terminal(git push*)", "edit(/etc/**)"] },
      cwd: () => "/w",
      askPermission: async (request) => {
        asked.push(request);
        return answers.shift() ?? "reject";
      },
    });
    let n = 0;
    const call = async (name: string, args: Record<string, unknown>) => {
      const kind: ToolKind = toolKind(name);
      return gate.gate({ call: { id: `c${++n}`, name, tool: name, args }, kind, definition: definition(name) }, ctx());
    };
    return { gate, asked, call };
  }

  test("deny refuses in every mode, naming the rule; nobody is asked", async () => {
    for (const mode of ["code", "ask", "read-only"] as const) {
      const { asked, call } = gateWith(mode, ["allow_once"]);
      const decision = await call("terminal", { command: "git push origin main" });
      assert.ok(decision && "block" in decision, mode);
      assert.match(decision.reason, /permission rule "terminal\(git push\*\)" \(permissions\.deny in config\.yaml\)/);
      assert.equal(asked.length, 0);
    }
  });

  test("ask rules ask even in code mode, with the rule as the reason; always is remembered per rule", async () => {
    const { asked, call } = gateWith("code", ["allow_always"]);
    assert.equal(await call("write", { file_path: "/w/src/a.ts" }), undefined);
    assert.equal(await call("write", { file_path: "/w/src/b.ts" }), undefined);
    assert.equal(await call("write", { file_path: "/w/notes.txt" }), undefined, "no rule: code mode runs it");
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.reason, 'the permission rule "write(src/**)"');
  });

  test("allow rules run without asking in ask mode; other mutating calls still ask", async () => {
    const { asked, call } = gateWith("ask", ["reject"]);
    assert.equal(await call("terminal", { command: "npm test -- --watch=false" }), undefined);
    assert.equal(asked.length, 0);
    const decision = await call("terminal", { command: "npm publish" });
    assert.ok(decision && "block" in decision);
    assert.match(decision.reason, /rejected/);
    assert.equal(asked.length, 1);
    assert.equal(asked[0]?.reason, undefined, "the mode's own question has no rule reason");
  });

  test("read-only refuses mutating calls even when a rule allows them", async () => {
    const { asked, call } = gateWith("read-only", []);
    const decision = await call("terminal", { command: "npm test" });
    assert.ok(decision && "block" in decision);
    assert.match(decision.reason, /read-only mode/);
    assert.equal(asked.length, 0);
  });

  test("confirm: deny still refuses without asking; an allowed call is not asked about twice", async () => {
    const { gate, asked } = gateWith("ask", ["allow_once"]);
    const event = (id: string, name: string, args: Record<string, unknown>) => ({
      call: { id, name, tool: name, args },
      kind: toolKind(name),
      definition: definition(name),
    });
    const why = { question: "the model repeats itself", reason: "Blocked: repeated" };
    const denied = await gate.confirm(event("d", "edit", { file_path: "/etc/hosts" }), ctx(), why);
    assert.match(denied?.reason ?? "", /edit\(\/etc\/\*\*\)/);
    assert.equal(asked.length, 0);
    const write = event("w", "write", { file_path: "/w/other.txt" });
    assert.equal(await gate.confirm(write, ctx(), why), undefined);
    assert.equal(asked[0]?.reason, "the model repeats itself");
    assert.equal(await gate.gate(write, ctx()), undefined, "the confirmed call runs without a second question");
    assert.equal(asked.length, 1);
    const refused = await gate.confirm(event("x", "read", { file_path: "/w/a" }), ctx(), why);
    assert.equal(refused?.reason, "Blocked: repeated", "a refusal gives the guard's reason");
  });
});
