/**
 * `crow acp` on stdio: its help, and its start once the configuration loads (what an editor launches). Over the
 * network instead, `crow acp --listen` is acp-net/command.ts.
 */
import { loadAcpConfig, loadAcpConfigOrExit } from "./load-config.js";

export const ACP_HELP = `Usage: crow acp

Runs the agent over ACP (JSON-RPC on stdin/stdout): what an editor launches, e.g. in Zed's settings.json
  "agent_servers": { "Crow": { "type": "custom", "command": "crow", "args": ["acp"] } }
stdout is the protocol only; logs go to stderr (CROW_LOG). Configuration as for every command (see 'crow --help'):
config.yaml and .env in CROW_HOME, or OPENAI_BASE_URL and CROW_MODEL in the editor's env block. Nothing configured,
the editor is offered 'crow init' (Terminal Auth). Check the setup with 'crow doctor'.

Over the network instead (a build box, a devcontainer; clients connect with e.g. 'crow run --connect URL'):
  crow acp --listen [HOST:]PORT [--token-file FILE] [--allowed-host NAME]…
serves ACP over Streamable HTTP and WebSocket at /acp; see docs/remote-acp.md.`;

/** Runs `crow acp` (`rest`: the positionals after "acp"; `help`: --help was given); resolves with the exit code. */
export async function runAcpCommand(rest: readonly string[], help: boolean): Promise<number> {
  if (help) {
    process.stdout.write(`${ACP_HELP}\n`);
    return 0;
  }
  if (rest.length > 0) {
    process.stderr.write(`crow acp takes no arguments (got: ${rest.join(" ")})\n`);
    return 2;
  }
  const config = await loadAcpConfigOrExit();
  if (config === 2) return 2;
  // Started by hand in a terminal, it would otherwise sit silent: say what it expects (stderr; stdout is ACP).
  if (process.stdin.isTTY) {
    process.stderr.write(
      "crow acp: waiting for an ACP client on stdin (JSON-RPC, one message per line); an editor launches this. To use Crow in this terminal, run 'crow run'. Ctrl-C quits.\n",
    );
  }
  const { runAcp } = await import("./run.js");
  await runAcp(config, loadAcpConfig);
  return 0;
}
