/**
 * Skills are read only as regular files, without blocking, size-capped: anything that could write a trusted
 * project's `.agents/skills` (a session with the sandbox off, a checkout) can leave a FIFO as a `SKILL.md` (which held
 * every later session start until the editor gave up), a link to `/dev/zero` (seconds and gigabytes) or a huge file.
 * Over a spawned `crow acp`: the session opens, the one good skill is offered, and the notice names each file left
 * out. The test's generous timeout is the only clock: a hang fails it.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdir, symlink, truncate, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { trustProject } from "@crow/core";
import { chunkText, textReply, useAcpFixture } from "@crow/testkit";

const skillsDir = (ws: string) => path.join(ws, ".agents", "skills");

describe("crow acp: a FIFO, a device or a huge file planted as SKILL.md does not hold the session up", () => {
  const fx = useAcpFixture({
    async prepare({ ws, crowHome }) {
      const root = skillsDir(ws.dir);
      for (const name of ["fifo", "zero", "huge", "good"]) await mkdir(path.join(root, name), { recursive: true });
      execFileSync("mkfifo", [path.join(root, "fifo", "SKILL.md")]);
      await symlink("/dev/zero", path.join(root, "zero", "SKILL.md"));
      const huge = path.join(root, "huge", "SKILL.md");
      await writeFile(huge, "---\nname: huge\ndescription: big\n---\n");
      await truncate(huge, 64 * 1024 * 1024);
      await writeFile(path.join(root, "good", "SKILL.md"), "---\nname: good\ndescription: A good skill.\n---\nBody.\n");
      await trustProject(ws.dir, { home: crowHome });
    },
  });

  test("the session opens; the notice names each file left out; the good skill is offered", {
    timeout: 120_000,
  }, async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    fx.mock.script(
      textReply("ok").expect((req) => {
        const system = String(req.body.messages[0]?.content);
        assert.match(system, /good/);
        assert.doesNotMatch(system, /\bhuge\b|\bfifo\b|\bzero\b/);
      }),
    );
    assert.equal((await fx.agent.prompt(sessionId, "hi")).stopReason, "end_turn");
    const notice = chunkText(fx.agent.updates(sessionId));
    const root = skillsDir(fx.ws.dir);
    assert.match(notice, /could not be loaded/);
    for (const name of ["fifo", "zero"]) {
      assert.ok(notice.includes(`${path.join(root, name, "SKILL.md")}: not read: it is not a regular file`), notice);
    }
    assert.ok(notice.includes(`${path.join(root, "huge", "SKILL.md")}: not read: 67108864 bytes`), notice);
  });
});
