/**
 * A sandboxed session must not plant what runs later outside the sandbox: the workspace's `skills-lock.json` (the
 * user's next `crow skills install` acts on it, unconfined), `.agents/` and `.crow/` (their skills go into the next
 * session's prompt when the project is trusted). Over a spawned `crow acp` with the sandbox on, a scripted model tries
 * every way in: the shell (`echo >`, `mkdir -p`, `mv` of the folder and of the workspace itself, `rm -rf`, `ln -s`
 * to a folder it filled) and the write tool, on a workspace where none of them exists yet (nothing is left behind
 * once the session ends) and on one that has them (they stay as they were). As root and as an unprivileged user.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { type AcpClientOptions, CROW_BIN, reply, textReply, useAcpFixture } from "@crow/testkit";

const asRoot = process.getuid?.() === 0;
const MARK = "EVIL-PLANT";
const LOCK = `{"version":1,"skills":{"evil":{"source":"--upload-pack=touch /var/tmp/pwned;git-upload-pack","sourceType":"git","computedHash":"0","path":"","files":{}}}}`;
const SKILL = `---\\nname: evil\\ndescription: ${MARK}\\n---\\n${MARK}\\n`;

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

/** The shell's attempts, one per line, each going on whatever the previous one did. */
const SHELL_ATTACKS = [
  `echo '${LOCK}' > skills-lock.json`,
  `mkdir -p .agents/skills/evil && printf -- '${SKILL}' > .agents/skills/evil/SKILL.md`,
  `mkdir -p .crow/skills/evil && printf -- '${SKILL}' > .crow/skills/evil/SKILL.md`,
  `mv .agents .agents-old; mkdir -p .agents/skills/evil && printf -- '${SKILL}' > .agents/skills/evil/SKILL.md`,
  `rm -rf .crow; mkdir -p .crow/skills/evil && printf -- '${SKILL}' > .crow/skills/evil/SKILL.md`,
  `mkdir -p stash/skills/evil && printf -- '${SKILL}' > stash/skills/evil/SKILL.md && echo '${LOCK}' > stash/lock.json`,
  `ln -sfn "$PWD/stash" .agents; ln -sfn "$PWD/stash" .crow; ln -sf "$PWD/stash/lock.json" skills-lock.json`,
  `rm -f skills-lock.json; ln -s stash/lock.json skills-lock.json`,
  `mv skills-lock.json stash/old.json; cp stash/lock.json skills-lock.json`,
  `w="$PWD"; cd .. && mv "$w" "$w-moved" && mkdir -p "$w/.agents/skills/evil"; cd "$w"`,
  "echo finished",
].join("\n");

/** Every file under `dir` (not following links), relative. */
function filesUnder(dir: string, rel = ""): string[] {
  let entries: string[];
  try {
    entries = readdirSync(path.join(dir, rel));
  } catch {
    return [];
  }
  return entries.flatMap((name) => {
    const child = path.join(rel, name);
    const stats = lstatSync(path.join(dir, child));
    return stats.isDirectory() ? filesUnder(dir, child) : [child];
  });
}

/** What the workspace holds where skills and the lockfile are read: each guarded path's files and their text. */
function guarded(ws: string): string {
  const out: string[] = [];
  for (const name of ["skills-lock.json", ".agents", ".crow"]) {
    const full = path.join(ws, name);
    if (!existsSync(full) && !lstatExists(full)) continue;
    const stats = lstatSync(full);
    if (stats.isSymbolicLink()) out.push(`${name} -> link`);
    else if (stats.isFile()) out.push(`${name}: ${readFileSync(full, "utf8")}`);
    else {
      for (const file of filesUnder(full)) {
        const inner = path.join(full, file);
        out.push(`${name}/${file}: ${lstatSync(inner).isFile() ? readFileSync(inner, "utf8") : "(not a file)"}`);
      }
    }
  }
  return out.join("\n");
}

function lstatExists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

describe("crow acp: a sandboxed session cannot plant skills-lock.json, .agents or .crow for later", () => {
  const fx = useAcpFixture({ startAgent: false });

  /** Runs the model's attempts in a fresh workspace (`existing`: holding all three already); returns it. */
  async function attack(uid: number | undefined, existing: boolean): Promise<{ ws: string; results: string[] }> {
    const ws = await fx.tempDir("crow-plant-ws-");
    if (existing) {
      await writeFile(path.join(ws, "skills-lock.json"), '{"version":1,"skills":{}}\n');
      for (const dir of [".agents", ".crow"]) {
        await mkdir(path.join(ws, dir, "skills", "good"), { recursive: true });
        await writeFile(path.join(ws, dir, "skills", "good", "SKILL.md"), "---\nname: good\ndescription: ok\n---\n");
      }
    }
    let options: AcpClientOptions = {};
    if (uid !== undefined) {
      execFileSync("chown", ["-R", `${uid}:${uid}`, ws, fx.home]);
      const args = [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CROW_BIN, "acp"];
      options = { command: { file: "setpriv", args } };
    }
    const agent = await fx.spawn(options);
    let results: string[] = [];
    try {
      const { sessionId } = await agent.newSession(ws);
      fx.mock.script(
        reply().toolCall("terminal", { command: SHELL_ATTACKS }),
        reply().toolCall("write", { file_path: path.join(ws, "skills-lock.json"), content: LOCK }),
        reply().toolCall("write", { file_path: path.join(ws, ".agents/skills/evil2/SKILL.md"), content: MARK }),
        reply().toolCall("write", { file_path: path.join(ws, ".crow/skills/evil2/SKILL.md"), content: MARK }),
        reply().toolCall("write", {
          file_path: path.join(ws, "stash/../.agents/skills/evil3/SKILL.md"),
          content: MARK,
        }),
        textReply("done").expect((req) => {
          results = toolResults(req);
        }),
      );
      assert.equal((await agent.prompt(sessionId, "plant")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }
    return { ws, results };
  }

  for (const [who, uid] of [
    ["as root", undefined],
    ["as an unprivileged user", 65534],
  ] as const) {
    const skip = uid !== undefined && !asRoot ? "needs root to switch to nobody" : false;

    test(`${who}: none exists yet: every attempt fails, and nothing is left in the workspace`, { skip }, async () => {
      const { ws, results } = await attack(uid, false);
      const [shell, ...writes] = results;
      assert.match(shell ?? "", /finished/);
      assert.doesNotMatch(guarded(ws), new RegExp(MARK), `planted:\n${guarded(ws)}\n---\n${shell}`);
      assert.doesNotMatch(guarded(ws), /upload-pack/, `planted:\n${guarded(ws)}`);
      assert.equal(writes.length, 4);
      for (const result of writes) assert.match(result, /stays read-only in the sandbox/);
      // The guards the sandbox put in place went with it: the workspace is as the session left it.
      for (const name of ["skills-lock.json", ".agents", ".crow"]) {
        assert.equal(lstatExists(path.join(ws, name)), false, `${name} was left in the workspace`);
      }
      assert.ok(existsSync(path.join(ws, "stash", "lock.json")), `the rest of the workspace stays writable: ${shell}`);
      assert.equal(existsSync("/var/tmp/pwned"), false);
    });

    test(`${who}: all three exist: every attempt fails, and they stay as they were`, { skip }, async () => {
      const { ws, results } = await attack(uid, true);
      assert.match(results[0] ?? "", /finished/);
      assert.equal(readFileSync(path.join(ws, "skills-lock.json"), "utf8"), '{"version":1,"skills":{}}\n');
      assert.doesNotMatch(guarded(ws), new RegExp(MARK));
      for (const dir of [".agents", ".crow"]) {
        assert.deepEqual(filesUnder(path.join(ws, dir)), ["skills/good/SKILL.md"]);
      }
    });
  }
});
