/**
 * The commands Crow prints for the user to paste ("Continue with", "Continue it with", "run crow skills trust"),
 * pasted: each is run as printed by `sh`, with `crow` the built binary, and does what it said (issue #52).
 */
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CROW_BIN, textReply } from "@crow/testkit";
import { listenFixture } from "./listen-helpers.js";
import { runCrow, runEnv, runProcess, useRunFixture } from "./run-helpers.js";
import { crowSkills, git, skillMd } from "./skills-helpers.js";

/** Runs `command` as a user pasting it into a shell would, `crow` being the built binary; in `cwd`. */
function paste(command: string, env: Record<string, string>, cwd: string) {
  const script = `crow() { "$CROW_NODE" "$CROW_BIN_JS" "$@"; }\n${command}`;
  return runProcess("sh", ["-c", script], {
    env: { ...env, CROW_NODE: process.execPath, CROW_BIN_JS: CROW_BIN },
    cwd,
  });
}

/** The command after `label` on a line of `text` (to its end, or to " (" that starts an aside). */
function printed(text: string, label: RegExp): string {
  const line = text.split("\n").find((l) => label.test(l));
  assert.ok(line, `no ${label} in:\n${text}`);
  return line.replace(label, "").trim();
}

describe("a pasted 'Continue with' after crow run --connect", () => {
  const f = listenFixture();

  test("names --connect URL and --token-file FILE: pasted, it continues the session on the server", async () => {
    const file = path.join(f.home, "token");
    writeFileSync(file, `${f.server.token}\n`);
    const env = runEnv("http://127.0.0.1:9/v1", f.home, { OPENAI_BASE_URL: undefined, CROW_MODEL: undefined });
    const url = f.server.url.replace(/^http/, "ws");
    f.mock.script(textReply("first answer"));
    const first = await runCrow(["--connect", url, "--token-file", file, "-c", f.ws.dir, "remember 7"], { env });
    assert.equal(first.code, 0, first.stderr);
    const command = printed(first.stderr, /^.*Continue with: /);
    assert.match(command, /^crow run -s \S+ --connect ws:\/\/\S+ --token-file \S+ -c \S+ "<prompt>"$/);

    f.mock.script(
      textReply("second answer").expect((req) => {
        const texts = req.body.messages.map((m) => String(m.content));
        assert.ok(texts.includes("remember 7"), "the first turn is in the continued session");
        assert.equal(texts.at(-1), "<prompt>");
      }),
    );
    const again = await paste(command, env, f.home);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /second answer/);
    f.mock.assertDone();
  });
});

describe("pasted hints on this machine", () => {
  const fx = useRunFixture();

  test("crow sessions fork: the printed 'Continue it with' command, pasted, runs the fork (no 'no prompt')", async () => {
    fx.mock.script(textReply("the original"));
    const first = await runCrow(["-c", fx.ws.dir, "remember 9"], { env: fx.env });
    assert.equal(first.code, 0, first.stderr);
    const id = /Continue with: crow run -s (\S+)/.exec(first.stderr)?.[1] ?? "";
    const fork = await paste(`crow sessions fork ${id}`, fx.env, fx.home.dir);
    assert.equal(fork.code, 0, fork.stderr);
    const forkId = fork.stdout.trim();
    const command = printed(fork.stderr, /^Continue it with: /);
    assert.match(command, new RegExp(`^crow run -s ${forkId} -c \\S+ "<prompt>"$`));

    fx.mock.script(
      textReply("the fork").expect((req) => {
        const texts = req.body.messages.map((m) => String(m.content));
        assert.ok(texts.includes("remember 9"));
        assert.equal(texts.at(-1), "<prompt>");
      }),
    );
    const pasted = await paste(command, fx.env, fx.home.dir);
    assert.equal(pasted.code, 0, pasted.stderr);
    assert.match(pasted.stdout, /the fork/);
    assert.match(pasted.stderr, new RegExp(`Continue with: crow run -s ${forkId}`));
    fx.mock.assertDone();
  });

  test("crow skills add into an untrusted project: told the skills stay unused until `crow skills trust`, which then trusts them", async () => {
    const project = fx.ws.path("project");
    mkdirSync(project, { recursive: true });
    git(project, "init", "-q");
    const source = fx.ws.path("source/skills/notes");
    mkdirSync(source, { recursive: true });
    writeFileSync(path.join(source, "SKILL.md"), skillMd("notes", "Write notes."));
    const homes = { home: fx.home.dir, crowHome: fx.home.dir };
    const added = await crowSkills(["add", fx.ws.path("source"), "--all"], { cwd: project, ...homes });
    assert.equal(added.code, 0, added.stderr);
    assert.match(added.stderr, /not trusted yet: .*unused until you run `crow skills trust` here/);
    const command = /`(crow skills trust)`/.exec(added.stderr)?.[1] ?? "";
    const before = await crowSkills(["list"], { cwd: project, ...homes });
    assert.match(before.stdout, /notes .*untrusted project/);

    const trusted = await paste(command, { ...fx.env }, project);
    assert.equal(trusted.code, 0, trusted.stderr);
    const after = await crowSkills(["list"], { cwd: project, ...homes });
    assert.match(after.stdout, /notes {2}project/);
    assert.doesNotMatch(after.stdout, /untrusted/);

    // A local source has no commit: `update` names what it holds by digest, not "(?)".
    const update = await crowSkills(["update"], { cwd: project, ...homes });
    assert.equal(update.code, 0, update.stderr);
    assert.match(update.stdout, /^notes: up to date \(sha256 [0-9a-f]{12}\)$/m);
    writeFileSync(path.join(source, "SKILL.md"), skillMd("notes", "Write better notes."));
    const changed = await crowSkills(["update", "--yes"], { cwd: project, ...homes });
    assert.equal(changed.code, 0, changed.stderr);
    assert.match(changed.stdout, /^notes: sha256 [0-9a-f]{12} → sha256 [0-9a-f]{12}: /m);
    assert.doesNotMatch(update.stdout + changed.stdout, /\?/);
  });
});
