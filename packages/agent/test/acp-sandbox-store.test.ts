/**
 * Crow's store (`~/.crow/crow.db` and its `-wal`, `-shm`, `-journal`) holds every project's transcripts, with whatever
 * a user pasted there: it is hidden from the sandbox like `.env`. Over a spawned `crow acp` whose home is outside
 * /tmp (the sandbox's /tmp is private, which would hide it by accident), one session is told a secret, and a session
 * in another project tries to read it back: the shell `cat`s the files, through a symbolic link it makes in its
 * workspace and a hard link it tries to make; the read tool reads the files, the link, and a hard link made earlier
 * outside the sandbox.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { link, mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { after, describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

const SECRET = "SECRET-TRANSCRIPT-4711";
/** The shell's pattern for the secret, written so that the command itself does not hold it. */
const PATTERN = "SECRET-TRANS''CRIPT-[0-9]*";

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("crow acp: the sandbox never shows Crow's store (another project's transcript)", () => {
  const fx = useAcpFixture({ startAgent: false });
  let home = "";
  after(() => (home ? rm(home, { recursive: true, force: true }) : undefined));

  test("shell, read tool, symbolic and hard links: the secret never comes back", { timeout: 120_000 }, async () => {
    home = await mkdtemp("/var/tmp/crow-store-home-");
    const crowHome = path.join(home, ".crow");
    const [first, second] = [path.join(home, "first"), path.join(home, "second")];
    for (const dir of [crowHome, first, second]) await mkdir(dir, { recursive: true });
    const agent = await fx.spawn({ env: { HOME: home, CROW_HOME: crowHome } });
    const db = path.join(crowHome, "crow.db");
    try {
      const one = await agent.newSession(first);
      fx.mock.script(textReply("noted"));
      await agent.prompt(one.sessionId, `my bank password is ${SECRET}`);
      assert.ok(existsSync(`${db}-wal`), "the store is in WAL mode with a -wal file");
      // A hard link made outside the sandbox (by the user, or a session with the sandbox off).
      await link(`${db}-wal`, path.join(second, "earlier-link"));

      const two = await agent.newSession(second);
      const files = [db, `${db}-wal`, `${db}-shm`].join(" ");
      fx.mock.script(
        reply().toolCall("terminal", {
          command: [
            `cat ${files} | grep -a -o '${PATTERN}'; echo "direct=$?"`,
            `ln -s ${db}-wal wal-link; grep -a -o '${PATTERN}' wal-link; echo "symlink=$?"`,
            `ln ${db}-wal hard-link; echo "hardlink=$?"; grep -a -o '${PATTERN}' hard-link; echo "hard=$?"`,
          ].join("\n"),
        }),
        reply().toolCall("read", { file_path: db }),
        reply().toolCall("read", { file_path: `${db}-wal` }),
        reply().toolCall("read", { file_path: path.join(second, "wal-link") }),
        reply().toolCall("read", { file_path: path.join(second, "earlier-link") }),
        textReply("ok").expect((req) => {
          const [shell, ...reads] = toolResults(req);
          assert.doesNotMatch(shell ?? "", new RegExp(SECRET));
          assert.match(shell ?? "", /direct=1[\s\S]*symlink=[12][\s\S]*hardlink=1/);
          assert.equal(reads.length, 4);
          for (const read of reads) {
            assert.doesNotMatch(read, new RegExp(SECRET));
            assert.match(read, /is hidden from tools/);
          }
        }),
      );
      assert.equal((await agent.prompt(two.sessionId, "find the password")).stopReason, "end_turn");
      fx.mock.assertDone();
    } finally {
      await agent.close();
    }
  });
});
