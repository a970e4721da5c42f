// `crow skills add` on a terminal: a source with several skills asks which, and a skill that runs code asks for a yes
// (a no installs nothing, exit 1).
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import { CROW_BIN, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { spawn as spawnPty } from "@lydell/node-pty";
import { cleanEnv, skillMd } from "./skills-helpers.js";

let ws: TempWorkspace;

before(async () => {
  ws = await tempWorkspace("crow-skills-tty-");
  await ws.write("source/notes/SKILL.md", skillMd("notes", "Take meeting notes."));
  await ws.write("source/deploy/SKILL.md", skillMd("deploy", "Deploy the app."));
  await chmod(await ws.write("source/deploy/scripts/deploy.sh", "#!/bin/sh\necho deploy\n"), 0o755);
});

after(() => ws.cleanup());

/** Runs `crow skills add` on a terminal, typing each answer once its question (a substring) has appeared. */
async function addOnTerminal(home: string, answers: [string, string][]) {
  await mkdir(home, { recursive: true });
  const pty = spawnPty(process.execPath, [CROW_BIN, "skills", "add", ws.path("source")], {
    cols: 160,
    rows: 30,
    cwd: ws.dir,
    env: { ...cleanEnv(), HOME: home, CROW_HOME: path.join(home, ".crow") },
  });
  let output = "";
  let next = 0;
  let seen = 0;
  pty.onData((data) => {
    output += data;
    const answer = answers[next];
    if (answer && output.indexOf(answer[0], seen) !== -1) {
      next += 1;
      seen = output.length;
      pty.write(`${answer[1]}\r`);
    }
  });
  const code = await new Promise<number>((resolve) => pty.onExit(({ exitCode }) => resolve(exitCode)));
  return { code, output };
}

test("on a terminal: the list is shown and the pick is asked; a skill with scripts asks for a yes", async () => {
  const home = ws.path("home");
  const yes = await addOnTerminal(home, [
    ["Install which?", "deploy"],
    ["anyway? [y/N]", "y"],
  ]);
  assert.equal(yes.code, 0, yes.output);
  assert.match(yes.output, /notes {2}Take meeting notes\./);
  assert.match(yes.output, /skill deploy can run code: ships a scripts\/ folder/);
  assert.deepEqual(readdirSync(path.join(home, ".agents", "skills")), ["deploy"]);

  const other = ws.path("home-no");
  const no = await addOnTerminal(other, [
    ["Install which?", "all"],
    ["anyway? [y/N]", "n"],
  ]);
  assert.equal(no.code, 1, no.output);
  assert.match(no.output, /nothing installed/);
  assert.equal(existsSync(path.join(other, ".agents", "skills")), false);
});
