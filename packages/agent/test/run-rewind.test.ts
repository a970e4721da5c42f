/**
 * `/rewind` in `crow run`: `crow run -s ID --rewind` (the picker, answered on stdin) and `/rewind` in the REPL, over
 * the built binary with a scripted model, real files, the real terminal and real git.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { reply, textReply } from "@crow/testkit";
import { runCrow, useRunFixture } from "./run-helpers.js";

/** The non-system messages of a request, as `role: text`. */
function said(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role !== "system").map((m) => `${m.role}: ${String(m.content)}`);
}

/** The session id a `--json` run announced. */
function sessionOf(stdout: string): string {
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const event = JSON.parse(line) as { type?: string; sessionId?: string };
    if (event.type === "session" && event.sessionId) return event.sessionId;
  }
  throw new Error(`no session event in:\n${stdout}`);
}

describe("crow run: /rewind", { timeout: 120_000 }, () => {
  const fx = useRunFixture();

  test("crow run -s ID --rewind picks a message, restores files and conversation, and the prompt goes on from there", async () => {
    const { ws, mock, env } = fx;
    await writeFile(ws.path("notes.txt"), "original\n");
    mock.script(
      reply().toolCall("terminal", { command: "sed -i s/original/changed/ notes.txt && printf 'new\\n' > added.txt" }),
      reply().toolCall("edit", { file_path: ws.path("notes.txt"), old_string: "changed", new_string: "edited" }),
      textReply("first done"),
    );
    const first = await runCrow(["-c", ws.dir, "--json", "change the notes"], { env });
    assert.equal(first.code, 0, first.stderr);
    const id = sessionOf(first.stdout);
    mock.script(reply().toolCall("write", { file_path: ws.path("later.txt"), content: "later\n" }), textReply("ok"));
    assert.equal((await runCrow(["-c", ws.dir, "-s", id, "and a later file"], { env })).code, 0);
    assert.equal(await readFile(ws.path("notes.txt"), "utf8"), "edited\n");

    mock.script(textReply("starting over").expect((req) => assert.deepEqual(said(req), ["user: do it differently"])));
    const picked = await runCrow(["-c", ws.dir, "-s", id, "--rewind", "do it differently"], { env, input: "1\nb\n" });
    assert.equal(picked.code, 0, picked.stderr);
    const shown = picked.stdout + picked.stderr;
    assert.match(shown, /1\. change the notes\n\s+changed after: (added\.txt, notes\.txt|notes\.txt, added\.txt)/);
    assert.match(shown, /2\. and a later file\n\s+changed after: later\.txt/);
    assert.match(shown, /Rewound the conversation to before message 1/);
    assert.match(shown, /Restored added\.txt, later\.txt, notes\.txt\./);
    assert.equal(await readFile(ws.path("notes.txt"), "utf8"), "original\n");
    assert.equal(existsSync(ws.path("added.txt")) || existsSync(ws.path("later.txt")), false);
    mock.assertDone();
  });

  test("the picker asks before overwriting a file the user changed; an empty answer rewinds nothing", async () => {
    const { ws, mock, env } = fx;
    mock.script(reply().toolCall("write", { file_path: ws.path("p.txt"), content: "agent\n" }), textReply("done"));
    const made = await runCrow(["-c", ws.dir, "--json", "write p"], { env });
    const id = sessionOf(made.stdout);
    await writeFile(ws.path("p.txt"), "mine\n");

    const none = await runCrow(["-c", ws.dir, "-s", id, "--rewind"], { env, input: "\n" });
    assert.equal(none.code, 0, none.stderr);
    assert.match(none.stdout + none.stderr, /Nothing rewound\./);

    const kept = await runCrow(["-c", ws.dir, "-s", id, "--rewind"], { env, input: "1\nf\nn\n" });
    assert.equal(kept.code, 0, kept.stderr);
    assert.match(kept.stdout + kept.stderr, /Changed since by someone other than the agent: p\.txt/);
    assert.equal(await readFile(ws.path("p.txt"), "utf8"), "mine\n", "left alone");

    const forced = await runCrow(["-c", ws.dir, "-s", id, "--rewind"], { env, input: "1\nf\ny\n" });
    assert.match(forced.stdout + forced.stderr, /Restored p\.txt/);
    assert.equal(existsSync(ws.path("p.txt")), false);
  });

  test("/rewind in the REPL lists and rewinds; --rewind without -s is a usage error", async () => {
    const { ws, mock, env } = fx;
    mock.script(reply().toolCall("write", { file_path: ws.path("repl.txt"), content: "x\n" }), textReply("wrote"));
    const run = await runCrow(["-c", ws.dir, "-i"], { env, input: "write repl\n/rewind\n/rewind 1\n" });
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /1\. write repl\n\s+changed after: repl\.txt/);
    assert.match(run.stdout, /Restored repl\.txt/);
    assert.equal(existsSync(ws.path("repl.txt")), false);

    const bad = await runCrow(["-c", ws.dir, "--rewind"], { env });
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--rewind needs a session/);
  });
});
