/**
 * crow-mcp reads its environment once, at start (src/settings.ts): a value it does not accept stops it before it
 * serves anything, with status 2 and a message naming the variable, the value and what it accepts — as a bad flag
 * does. Before, a bad number silently meant the default (CROW_WEB_TIMEOUT=20s: 20 s, or 30; CROW_LSP=OFF: on).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { describe, test } from "node:test";
import { CROW_MCP_BIN, callTool, connectStdio, tempWorkspace } from "@crow/testkit";

/** crow-mcp on stdio with `env` over this process's environment, stdin empty (it serves until stdin ends). */
function crowMcp(env: Record<string, string>, args: string[] = []) {
  return spawnSync(process.execPath, [CROW_MCP_BIN, ...args], {
    encoding: "utf8",
    input: "",
    env: { ...process.env, ...env },
    timeout: 60_000,
  });
}

describe("crow-mcp's environment settings", () => {
  const refused: Array<[name: string, value: string, accepts: string]> = [
    ["CROW_WEB_TIMEOUT", "20s", "a positive number of seconds"],
    ["CROW_TERMINAL_SOFT_TIMEOUT", "0", "a positive number of seconds"],
    ["CROW_LSP_WAIT", "-1", "a positive number of seconds"],
    ["CROW_LSP_START_WAIT", "Infinity", "a positive number of seconds"],
    ["CROW_LSP", "OFF", "on or off"],
    ["CROW_MCP_LOG", "verbose", "error, warn, info or debug"],
    ["SEARXNG_URL", "localhost:2946", "an http or https URL"],
  ];
  for (const [name, value, accepts] of refused) {
    test(`${name}=${value} is refused by name, with status 2, before anything is served`, () => {
      const run = crowMcp({ [name]: value });
      assert.equal(run.status, 2, run.stderr);
      assert.equal(run.stdout, "");
      assert.equal(
        run.stderr,
        `crow-mcp: ${name} must be ${accepts}, got ${JSON.stringify(value)}\nRun 'crow-mcp --help' for usage.\n`,
      );
    });
  }

  test("a bad value is refused whatever else is asked: over --http too", () => {
    const run = crowMcp({ CROW_WEB_TIMEOUT: "soon" }, ["--http", "--port", "0", "--no-auth"]);
    assert.equal(run.status, 2);
    assert.match(run.stderr, /^crow-mcp: CROW_WEB_TIMEOUT must be a positive number of seconds, got "soon"\n/);
  });

  test("--help and --version still answer, and the help lists the variables", () => {
    const help = crowMcp({ CROW_WEB_TIMEOUT: "soon" }, ["--help"]);
    assert.equal(help.status, 0);
    for (const name of ["SEARXNG_URL", "CROW_WEB_TIMEOUT", "CROW_MCP_LOG", "CROW_LSP_WAIT", "CROW_BWRAP"]) {
      assert.match(help.stdout, new RegExp(`\\b${name}\\b`));
    }
    assert.equal(crowMcp({ CROW_LSP: "maybe" }, ["--version"]).status, 0);
  });

  test("valid values and empty ones (unset) start it: it serves until stdin ends", () => {
    const valid = {
      CROW_WEB_TIMEOUT: "2.5",
      CROW_TERMINAL_SOFT_TIMEOUT: "10",
      CROW_LSP: "on",
      CROW_LSP_WAIT: "1",
      CROW_LSP_START_WAIT: "30",
      CROW_MCP_LOG: "info",
      SEARXNG_URL: "https://search.example/searxng",
    };
    const served = crowMcp(valid);
    assert.equal(served.status, 0, served.stderr);
    // info: the log level was taken (warn, the default, would not say it).
    assert.match(served.stderr, /\[crow-mcp\] info: serving stdio in /);
    const empty = Object.fromEntries(Object.keys(valid).map((name) => [name, ""]));
    const unset = crowMcp(empty);
    assert.equal(unset.status, 0, unset.stderr);
    assert.doesNotMatch(unset.stderr, /info:/);
  });

  test("CROW_TERMINAL_SOFT_TIMEOUT reaches the terminal: a quiet command returns as still running after it", async () => {
    const ws = await tempWorkspace();
    const mcp = await connectStdio({ cwd: ws.dir, env: { CROW_TERMINAL_SOFT_TIMEOUT: "1" } });
    try {
      // The default soft timeout is 30 s: this call would otherwise end with the command, after 60 s.
      const result = await callTool(mcp.client, "terminal", { command: "echo started; sleep 60" });
      assert.match(result.text, /^started\n/);
      assert.match(result.text, /\[Process still running \(soft timeout\)\]$/);
    } finally {
      await mcp.close();
      await ws.cleanup();
    }
  });
});
