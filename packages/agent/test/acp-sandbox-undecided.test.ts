/**
 * A sandbox check that does not finish is no verdict that bubblewrap cannot confine here. Anyone who can load the
 * machine (another local user) can make the check run out of time; before, the agent then took "bubblewrap cannot
 * create a sandbox here" for the rest of its life and ran every command unconfined. Over a spawned `crow acp`, with
 * a bwrap that is killed while it runs the check (SIGTERM, as the check's timeout kills it), and a scripted model
 * writing outside the workspace:
 * - the agent's check killed, crow-mcp's own check (before it starts the shell) passes: the command runs confined;
 * - every check killed: the command is refused, saying why, and runs nowhere.
 * As root and as an unprivileged user.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, describe, test } from "node:test";
import { type AcpClientOptions, CROW_BIN, reply, textReply, useAcpFixture } from "@crow/testkit";

const asRoot = process.getuid?.() === 0;
const realBwrap = execFileSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).trim();

/** The tool results the model got in the request `req` (in call order). */
function toolResults(req: { body: { messages: Array<{ role: string; content?: unknown }> } }): string[] {
  return req.body.messages.filter((m) => m.role === "tool").map((m) => String(m.content));
}

describe("crow acp: a sandbox check that did not finish never lets a command run unconfined", () => {
  const fx = useAcpFixture({ startAgent: false });
  const made: string[] = [];
  after(() => Promise.all(made.map((dir) => rm(dir, { recursive: true, force: true }))));

  /**
   * A `bwrap` that dies by SIGTERM the first `killed` times it is asked to run the sandbox check (its script prints
   * "crow-sandbox-confined"; `Infinity`: every time), then is the real one. Each kill takes a token with mkdir, which
   * is atomic: the agent's and crow-mcp's checks may run at once. It lives outside the workspace, as a system bwrap.
   */
  const slowBwrap = async (killed: number): Promise<{ dir: string; bwrap: string }> => {
    const dir = await fx.tempDir("crow-slow-bwrap-");
    const bwrap = path.join(dir, "bwrap");
    const takeToken = Number.isFinite(killed)
      ? `for i in $(seq ${killed}); do mkdir ${dir}/kill-$i 2>/dev/null && kill -TERM $$; done`
      : "kill -TERM $$";
    await writeFile(
      bwrap,
      `#!/bin/sh\ncase "$*" in *crow-sandbox-confined*) ${takeToken} ;; esac\nexec ${realBwrap} "$@"\n`,
    );
    await chmod(bwrap, 0o755);
    return { dir, bwrap };
  };

  /** Runs `echo pwned > <a directory outside the workspace>/pwned` through the agent; returns what the model saw. */
  const writeOutside = async (killed: number, uid: number | undefined) => {
    const ws = fx.ws.path(`${uid ?? "root"}-${Number.isFinite(killed) ? killed : "all"}`);
    await mkdir(ws);
    // Not under /tmp: the sandboxed shell has a private one, and the write must reach a real directory to be refused.
    const outside = await mkdtemp(path.join("/var/tmp", "crow-outside-"));
    made.push(outside);
    const { dir, bwrap } = await slowBwrap(killed);
    let options: AcpClientOptions = { env: { CROW_BWRAP: bwrap } };
    if (uid !== undefined) {
      execFileSync("chown", ["-R", `${uid}:${uid}`, ws, outside, dir, fx.home]);
      const args = [`--reuid=${uid}`, `--regid=${uid}`, "--clear-groups", process.execPath, CROW_BIN, "acp"];
      options = { ...options, command: { file: "setpriv", args } };
    }
    const agent = await fx.spawn(options);
    try {
      const { sessionId } = await agent.newSession(ws);
      const target = path.join(outside, "pwned");
      fx.mock.script(
        reply().toolCall("terminal", { command: `echo pwned > ${target}; echo finished` }),
        textReply("ok"),
      );
      const turn = await agent.prompt(sessionId, "write outside");
      assert.equal(turn.stopReason, "end_turn");
      const notice = JSON.stringify(turn.updates.filter((u) => u.sessionUpdate === "agent_message_chunk"));
      const shown = toolResults(fx.mock.requests.at(-1) as Parameters<typeof toolResults>[0]).at(-1) ?? "";
      assert.equal(existsSync(target), false, `the command wrote outside the workspace: ${shown}`);
      return { shown, notice };
    } finally {
      await agent.close();
    }
  };

  for (const [who, uid] of [
    ["as root", undefined],
    ["as an unprivileged user", 65534],
  ] as const) {
    const skip = uid !== undefined && !asRoot ? "needs root to switch to nobody" : false;

    test(`${who}: the agent's check is killed, crow-mcp's passes: the command runs confined`, { skip }, async () => {
      const { shown } = await writeOutside(1, uid);
      assert.match(shown, /Read-only file system/);
      assert.match(shown, /finished/);
    });

    test(`${who}: every check is killed: the command is refused, saying why, and runs nowhere`, { skip }, async () => {
      const { shown } = await writeOutside(Number.POSITIVE_INFINITY, uid);
      assert.match(shown, /the sandbox cannot start: the sandbox check did not finish \(bwrap did not answer/);
      assert.doesNotMatch(shown, /finished/);
    });
  }
});
