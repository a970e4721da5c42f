/**
 * Writes against a racing link, with the sandbox on and an editor that offers fs: a spawned `crow acp`, a scripted
 * model that starts a loop in the sandboxed shell swapping a workspace link between a workspace directory and one
 * outside, then writes through the link 200 times. The editor would open the path again after Crow's check, so with
 * the sandbox on writes go to crow-mcp, which checks the directory it holds open: nothing lands outside.
 * Needs bwrap and perl (the swapping loop).
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { reply, SWAP_LINK_PERL, textReply, useAcpFixture } from "@crow/testkit";

const ROUNDS = 20;
const WRITES_PER_ROUND = 10;

describe("crow acp: a racing link does not send a write outside the workspace (sandbox on, editor fs)", () => {
  const fx = useAcpFixture({
    agent: { fs: true },
    async prepare({ ws }) {
      await ws.write("inside/.keep", "");
      await ws.write("swap.pl", SWAP_LINK_PERL);
    },
  });

  test(`${ROUNDS * WRITES_PER_ROUND} writes through the swapping link land only inside`, async () => {
    // Outside /tmp: the sandbox has its own /tmp.
    const outside = await mkdtemp(path.join("/var/tmp", "crow-write-race-"));
    try {
      const { sessionId } = await fx.agent.newSession(fx.ws.dir);
      const ready = fx.ws.path(".ready");
      const link = fx.ws.path("d");
      const loop = `perl swap.pl ${link} ${fx.ws.path("inside")} ${outside} ${ready} ${fx.ws.path(".stop")} >swap.log 2>&1 &`;
      fx.mock.script(reply().toolCall("terminal", { command: loop }), textReply("started"));
      await fx.agent.prompt(sessionId, "start the loop");
      for (let waited = 0; !existsSync(ready); waited++) {
        assert.ok(waited < 6000, "the swapping loop never started");
        await sleep(10);
      }
      const rounds = Array.from({ length: ROUNDS }, (_, r) => {
        const round = reply();
        for (let i = 0; i < WRITES_PER_ROUND; i++) {
          const n = r * WRITES_PER_ROUND + i;
          round.toolCall("write", { file_path: path.join(link, `f${n}.txt`), content: `write ${n}\n` });
        }
        return round;
      });
      fx.mock.script(...rounds, textReply("done"));
      try {
        await fx.agent.prompt(sessionId, "write through d again and again");
      } finally {
        await writeFile(fx.ws.path(".stop"), "");
      }
      fx.mock.assertDone();
      assert.deepEqual(readdirSync(outside), [], "nothing landed outside the workspace");
      const landed = readdirSync(fx.ws.path("inside")).filter((f) => f.endsWith(".txt"));
      assert.ok(landed.length > 0, "some writes landed inside (the link pointed there at the time)");
      assert.ok(!fx.agent.fsCalls.some((c) => c.startsWith("write ")), "no write went through the editor");
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});
