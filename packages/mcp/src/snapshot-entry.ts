/**
 * The entry of crow-mcp's V8 startup snapshot: scripts/bundle.mjs bundles it as one classic script
 * (crow-mcp-snapshot.cjs beside crow-mcp.js); crow's snapshot builder (packages/agent/src/snapshot/build.ts) builds a
 * blob of it for each node, and crow starts its shared crow-mcp from that blob when there is one
 * (packages/agent/src/tools/shared.ts). A start from it skips compiling and evaluating the server, the MCP SDK and the
 * tools. Only module evaluation runs while building (no V8 flags, no I/O, no handles); flags are set at each start.
 */
// First: zod decides whether it may compile when each schema is created, and the snapshot creates them all.
import "./zod-jitless.js";
import { startupSnapshot } from "node:v8";
import { runCrowMcp } from "./command.js";
import { log } from "./log.js";
import { nodeImporter, startFromSnapshot } from "./snapshot-runtime.js";
import { applyV8Flags, SHARED_V8_FLAGS } from "./v8-flags.js";
// What a socket server loads lazily in the bundle (its sessions, the MCP server and the tools).
import "./socket.js";
import "./socket-sessions.js";
import "./server.js";

/** The file this script was built from: crow-mcp-snapshot.cjs, beside crow-mcp.js (a classic script has __filename). */
const builtFrom = __filename;

function failed(error: unknown): never {
  log.error("fatal", error);
  process.exit(1);
}

startupSnapshot.setDeserializeMainFunction(() => {
  startFromSnapshot({
    builtFrom,
    entry: "crow-mcp.js",
    importer: nodeImporter(builtFrom),
    onFallback: (message) => log.debug(message),
    onError: failed,
    start: () => {
      log.debug("started from the startup snapshot");
      applyV8Flags(SHARED_V8_FLAGS);
      runCrowMcp().catch(failed);
    },
  });
});
