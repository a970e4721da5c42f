/**
 * The editor-side read against a racing link: a spawned `crow acp` whose client answers `fs/read_text_file` from
 * disk, a scripted model that starts a loop in the sandboxed shell swapping a workspace link between a harmless file
 * and Crow's `.env`, then reads the link 200 times. The agent checks the path before asking the editor, and the
 * editor opens the path again afterwards: what comes back is checked too, and the key never reaches the model.
 * Needs bwrap and perl (the swapping loop).
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { reply, SWAP_LINK_PERL, textReply, useAcpFixture } from "@crow/testkit";

const SECRET = "sk-editor-race-secret-0123456789";
const ROUNDS = 20;
const READS_PER_ROUND = 10;

describe("crow acp: a racing link does not lead the editor-side read to Crow's .env", () => {
  const fx = useAcpFixture({
    agent: { fs: true },
    async prepare({ crowHome, ws }) {
      await writeFile(path.join(crowHome, ".env"), `CROW_RACE_TOKEN=${SECRET}\n`);
      await ws.write("harmless.txt", "harmless text\n");
      await ws.write("swap.pl", SWAP_LINK_PERL);
    },
  });

  test(`${ROUNDS * READS_PER_ROUND} reads of the swapping link never return the key`, async () => {
    const { sessionId } = await fx.agent.newSession(fx.ws.dir);
    const dotenv = path.join(fx.crowHome, ".env");
    const ready = fx.ws.path(".ready");
    const loop = `perl swap.pl ${fx.ws.path("x")} ${fx.ws.path("harmless.txt")} ${dotenv} ${ready} ${fx.ws.path(".stop")} >swap.log 2>&1 &`;
    fx.mock.script(reply().toolCall("terminal", { command: loop }), textReply("started"));
    await fx.agent.prompt(sessionId, "start the loop");
    for (let waited = 0; !existsSync(ready); waited++) {
      assert.ok(waited < 6000, "the swapping loop never started");
      await sleep(10);
    }
    const results: string[] = [];
    // Each call a different limit: the agent blocks a call repeated with identical arguments.
    const rounds = Array.from({ length: ROUNDS }, (_, r) => {
      const round = reply();
      for (let i = 0; i < READS_PER_ROUND; i++) {
        round.toolCall("read", { file_path: fx.ws.path("x"), limit: 100 + r * READS_PER_ROUND + i });
      }
      return round;
    });
    const collect = (req: { body: { messages: Array<{ role: string; content?: unknown }> } }) => {
      // The first tool result is the terminal call that started the loop.
      const tools = req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
      results.splice(0, results.length, ...tools.slice(1));
    };
    fx.mock.script(
      ...rounds.map((round, i) => (i === 0 ? round : round.expect(collect))),
      textReply("done").expect(collect),
    );
    try {
      await fx.agent.prompt(sessionId, "read x again and again");
    } finally {
      await writeFile(fx.ws.path(".stop"), "");
    }
    fx.mock.assertDone();
    assert.equal(results.length, ROUNDS * READS_PER_ROUND);
    for (const [i, result] of results.entries()) {
      assert.doesNotMatch(result, new RegExp(SECRET), `read ${i} returned the key`);
    }
    assert.ok(
      results.some((r) => /harmless text/.test(r)),
      `the harmless file was read: ${[...new Set(results.map((r) => r.slice(0, 100)))].join(" | ").slice(0, 2000)}`,
    );
  });
});
