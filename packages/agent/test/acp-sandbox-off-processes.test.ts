/**
 * With the sandbox off, every process a session's shell started ends when crow does, also those that left the shell's
 * session and process tree (`setsid`, `nohup setsid`, a double fork): README "every shell and its children are
 * killed". From the model's seat through a spawned `crow acp`.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

/** Pids of live (non-zombie) processes whose command line contains `tag`. */
function running(tag: string): number[] {
  let out = "";
  try {
    out = execFileSync("pgrep", ["-f", tag], { encoding: "utf8" });
  } catch {
    return [];
  }
  return out
    .split("\n")
    .filter((line) => /^\d+$/.test(line))
    .map(Number)
    .filter((pid) => {
      try {
        return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
      } catch {
        return false;
      }
    });
}

describe("crow acp, sandbox off: the shell's escaped processes end with crow", () => {
  const fx = useAcpFixture({
    startAgent: false,
    prepare: ({ crowHome }) => writeFileSync(path.join(crowHome, "config.yaml"), "sandbox: off\n"),
  });

  test("setsid, nohup setsid and a double fork are gone once crow acp has exited", async () => {
    const tag = String(process.pid * 1000 + Math.floor(Math.random() * 1000));
    const agent = await fx.spawn();
    const { sessionId } = await agent.newSession(fx.ws.dir);
    fx.mock.script(
      reply().toolCall("terminal", {
        command: [
          `setsid sleep 911.${tag} &`,
          `nohup setsid sleep 912.${tag} >/dev/null 2>&1 &`,
          `( ( sleep 913.${tag} & ) & )`,
          `until [ "$(pgrep -fc '91[1-3]\\.${tag}')" = 3 ]; do sleep 0.05; done; echo started`,
        ].join("\n"),
      }),
      textReply("planted"),
    );
    await agent.prompt(sessionId, "plant");
    fx.mock.assertDone();
    assert.equal(running(tag).length, 3);
    await agent.close();
    const deadline = Date.now() + 10_000;
    while (running(tag).length > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    assert.deepEqual(running(tag), [], "a process the shell started outlived crow");
  });
});
