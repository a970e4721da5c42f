/**
 * `crow acp` and `crow-mcp` started by hand in a terminal say on stderr what they wait for, instead of sitting
 * silent; started by a client (stdin a pipe) they print nothing but protocol.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { describe, test } from "node:test";
import { CROW_BIN, CROW_MCP_BIN } from "@crow/testkit";
import { spawn as spawnPty } from "@lydell/node-pty";
import { plain, tempHome } from "./run-helpers.js";

/** Output of `args` in a pseudo-terminal until `match` appears (then the process is killed). */
function inTerminal(args: string[], env: Record<string, string>, match: RegExp): Promise<string> {
  const pty = spawnPty(process.execPath, args, { cols: 200, rows: 20, env });
  let output = "";
  return new Promise((resolve) => {
    const done = () => {
      pty.kill("SIGKILL");
      resolve(plain(output));
    };
    pty.onData((data) => {
      output += data;
      if (match.test(plain(output))) done();
    });
    pty.onExit(() => resolve(plain(output)));
  });
}

function environment(home: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
  }
  return { ...env, HOME: home, CROW_HOME: home };
}

describe("started by hand in a terminal", { timeout: 120_000 }, () => {
  test("crow acp says it waits for an ACP client and points to crow run", async () => {
    const home = await tempHome();
    try {
      const out = await inTerminal([CROW_BIN, "acp"], environment(home.dir), /Ctrl-C quits/);
      assert.match(out, /crow acp: waiting for an ACP client on stdin .* run 'crow run'\. Ctrl-C quits\./);
    } finally {
      await home.cleanup();
    }
  });

  test("crow-mcp says it waits for an MCP client", async () => {
    const home = await tempHome();
    try {
      const out = await inTerminal([CROW_MCP_BIN], environment(home.dir), /Ctrl-C quits/);
      assert.match(out, /crow-mcp: waiting for an MCP client on stdin .*Ctrl-C quits\./);
    } finally {
      await home.cleanup();
    }
  });

  test("started by a client (stdin a pipe), crow acp prints no such line", async () => {
    const home = await tempHome();
    try {
      const child = spawn(process.execPath, [CROW_BIN, "acp"], { env: environment(home.dir) });
      let stderr = "";
      child.stderr.setEncoding("utf8").on("data", (t: string) => {
        stderr += t;
      });
      child.stdin.end();
      await new Promise((resolve) => child.on("close", resolve));
      assert.doesNotMatch(stderr, /waiting for/);
    } finally {
      await home.cleanup();
    }
  });
});
