/**
 * `registerPromptArgs` (extensions' system prompt variables, stored with the session) and `session.problems()`
 * carrying the warnings an extension published while the session opened — the two runtime pieces the skills
 * extension is built on — through the SDK, without ACP.
 */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createRuntime } from "@crow/core";

describe("extension prompt variables and opening problems", () => {
  let home: string;
  let ws: string;
  const warnings: string[] = [];
  const logger = { debug: () => {}, info: () => {}, warn: (m: string) => warnings.push(m), error: () => {} };

  before(async () => {
    home = await mkdtemp(path.join(tmpdir(), "crow-args-home-"));
    ws = await mkdtemp(path.join(tmpdir(), "crow-args-ws-"));
    await mkdir(path.join(home, "prompts"));
    await writeFile(
      path.join(home, "prompts", "system_prompt.njk"),
      "Team {{ team }} in {{ workspace }}.\nHint: {{ skills_hint }}\n",
    );
  });
  after(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(ws, { recursive: true, force: true });
  });

  test("variables reach the user template and the store; built-ins win; hints join; a throwing provider is skipped", async () => {
    const crow = await createRuntime({
      home,
      logger,
      disableBuiltins: ["skills"],
      extensions: [
        (api) => api.registerPromptArgs(({ cwd }) => ({ team: "payments", workspace: "/elsewhere", cwdSeen: cwd })),
        (api) => api.registerPromptArgs(() => ({ skills_hint: "first hint" })),
        {
          name: "flaky",
          extension: (api) =>
            api.registerPromptArgs(() => {
              throw new Error("no variables today");
            }),
        },
        (api) => api.registerPromptArgs(async () => ({ skills_hint: "second hint" })),
      ],
    });
    try {
      const session = await crow.newSession({ cwd: ws });
      assert.equal(session.systemPrompt, `Team payments in ${ws}.\nHint: first hint\nsecond hint`);
      const stored = await crow.store?.getSession(session.id);
      assert.equal((stored?.promptArgs as Record<string, unknown> | null)?.cwdSeen, ws);
      assert.ok(warnings.some((w) => w.includes("[flaky] system prompt variables failed: no variables today")));
    } finally {
      await crow.close();
    }
  });

  test("warnings published while a session opens are in problems(); later info notices are not", async () => {
    const crow = await createRuntime({
      home,
      logger,
      disableBuiltins: ["skills"],
      extensions: [
        (api) =>
          api.onSession((session) => {
            session.notify("the widget index is stale", "warning");
            session.notify("just saying hi", "info");
            return undefined;
          }),
        (api) =>
          api.onSession(() => {
            throw new Error("setup exploded");
          }),
      ],
    });
    try {
      const session = await crow.newSession({ cwd: ws });
      const problems = session.problems();
      assert.ok(problems.includes("the widget index is stale"));
      assert.ok(problems.some((p) => /failed to set up the session: setup exploded/.test(p)));
      assert.ok(!problems.includes("just saying hi"));
      session.notify("after opening", "warning");
      assert.ok(!session.problems().includes("after opening"));
    } finally {
      await crow.close();
    }
  });
});
