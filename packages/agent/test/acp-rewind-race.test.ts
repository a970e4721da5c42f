/**
 * Rewind's restore against a racing link, over a spawned `crow acp` with a scripted model playing the attacker: a
 * background loop in the sandboxed shell swaps a workspace directory for a link to a directory outside (`~/victim`)
 * while `_crow/rewind` puts that directory's files back (rewriting some, deleting the ones created since). Restore
 * runs outside the sandbox: it must never write or delete through the link. As root (what CI sees) and as an
 * unprivileged user (`nobody`, through setpriv; skipped when the tests do not run as root).
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import type { RewindPoint, RewindResult } from "@crow/core";
import { type AcpClientOptions, CROW_BIN, reply, textReply, useAcpFixture } from "@crow/testkit";

const FILES = 20;
const ATTEMPTS = 40;

/** The victim directory's files and contents, sorted. */
async function contents(dir: string): Promise<string[]> {
  const names = (await readdir(dir)).sort();
  return Promise.all(names.map(async (name) => `${name}=${await readFile(path.join(dir, name), "utf8")}`));
}

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

describe("crow acp: /rewind's restore never follows a link raced into the workspace", { timeout: 300_000 }, () => {
  const fx = useAcpFixture({ startAgent: false });

  const race = async (name: string, uid: number | undefined) => {
    const { mock } = fx;
    const ws = { dir: fx.ws.path(name), path: (relative: string) => fx.ws.path(path.join(name, relative)) };
    await mkdir(ws.dir);
    const victim = await fx.tempDir("crow-victim-");
    for (let i = 0; i < FILES; i++) {
      await writeFile(path.join(victim, `keep${i}.txt`), "victim\n");
      await writeFile(path.join(victim, `data${i}.txt`), "victim\n");
    }
    const untouched = await contents(victim);
    await mkdir(ws.path("d"));
    for (let i = 0; i < FILES; i++) await writeFile(ws.path(`d/keep${i}.txt`), "original\n");
    let options: AcpClientOptions = {};
    if (uid !== undefined) {
      execFileSync("chown", ["-R", `${uid}:${uid}`, ws.dir, victim, fx.home]);
      const args = [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CROW_BIN, "acp"];
      options = { command: { file: "setpriv", args } };
    }
    const agent = await fx.spawn(options);
    const { sessionId } = await agent.newSession(ws.dir);
    // Turn 1: the agent rewrites d/keep* and creates d/data*; a rewind to before it rewrites the first and deletes
    // the others. Turn 2 starts the loop: each round it puts the agent's files back (so every rewind has work to do),
    // then swaps d/ for a link to the victim and back.
    const touch = `for i in $(seq 0 ${FILES - 1}); do echo agent > d/keep$i.txt; echo agent > d/data$i.txt; done`;
    const loop =
      `(while [ ! -e stop ]; do ${touch}; mv -T d D && ln -s ${victim} d && sleep 0.002; rm -f d; mv -T D d; done; ` +
      "touch stopped) >/dev/null 2>&1 &";
    mock.script(
      reply().toolCall("terminal", { command: touch }),
      textReply("files written"),
      reply().toolCall("terminal", { command: `${loop} echo started` }),
      textReply("racing"),
    );
    assert.equal((await agent.prompt(sessionId, "write the files")).stopReason, "end_turn");
    assert.equal((await agent.prompt(sessionId, "start the race")).stopReason, "end_turn");
    mock.assertDone();

    const answer: { points: RewindPoint[] } = await agent.agent.request("_crow/rewind", { sessionId });
    const first = answer.points[0];
    assert.ok(first);
    let restoredSome = 0;
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      try {
        const result: RewindResult = await agent.agent.request("_crow/rewind", {
          sessionId,
          seq: first.seq,
          scope: "files",
          overwrite: true,
        });
        if (result.restored.length > 0) restoredSome++;
      } catch {
        // A snapshot taken while the loop swaps may fail (git refuses a path beyond a link): not what is tested.
      }
      assert.deepEqual(await contents(victim), untouched, `the victim is untouched after rewind ${attempt + 1}`);
    }
    await writeFile(ws.path("stop"), "");
    // The loop ends its round and says so: the workspace is removed afterwards, which a round still writing would
    // fill again under rm's feet (ENOTEMPTY).
    for (let polls = 0; !existsSync(ws.path("stopped")); polls++) {
      assert.ok(polls < 1200, "the racing loop never stopped");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.ok(restoredSome > 0, "some rewinds restored files while the loop ran");
    assert.deepEqual(await contents(victim), untouched);
    assert.equal(existsSync(path.join(victim, "d")), false);
    await agent.close();
    return restoredSome;
  };

  test(`as root: a loop swapping d/ for a link to a victim directory during ${ATTEMPTS} rewinds never touches the victim`, async (t) => {
    t.diagnostic(`${await race("root", undefined)} of ${ATTEMPTS} rewinds restored files while the loop ran`);
  });

  test("as an unprivileged user: the same", { skip: asRoot ? false : "needs root to switch to nobody" }, async (t) => {
    t.diagnostic(`${await race("nobody", NOBODY)} of ${ATTEMPTS} rewinds restored files while the loop ran`);
  });
});
