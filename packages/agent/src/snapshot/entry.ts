/**
 * The entry of crow's V8 startup snapshot. scripts/bundle.mjs bundles it as one classic script
 * (bundle/crow-snapshot.cjs); snapshot/build.ts runs that script under `node --build-snapshot` once per Node binary,
 * and the `crow` launcher (bundle/crow) starts `node --snapshot-blob <blob>` when a blob fits. Such a start skips what
 * every other start does first: compiling and evaluating the agent's modules (zod and the ACP and MCP SDKs building
 * their schemas, the runtime, the store), ~250 ms of CPU on a small machine. The functions run while building keep
 * their bytecode in the snapshot too.
 *
 * What runs while building is only module evaluation (and the YAML parser's load): no V8 flags (V8 refuses a
 * snapshot built under other flags than the process loading it), no I/O, no handles. Everything about the process
 * (its arguments, environment, console, flags, the early toolserver) is read or set in the main function below, at
 * each start. Built-in modules that cannot be in a snapshot (node:http) are loaded on first use instead (see
 * lazyBuiltins in scripts/bundle-options.mjs).
 */
// First: zod decides whether it may compile when each schema is created, and the snapshot creates them all.
import "@crow/mcp/zod-jitless";
import { startupSnapshot } from "node:v8";
import { setModuleImporter } from "@crow/core";
import { nodeImporter, startFromSnapshot } from "@crow/mcp/snapshot-runtime";
import { runCrowAndExit } from "../command.js";
import { preloadYaml } from "../config/index.js";
import { startToolserverEarly } from "../early-toolserver.js";
import { log } from "../log.js";
import { prepareProcess } from "../process-setup.js";
// What `crow acp`, `crow run` and a session load lazily in the bundle: evaluated once here instead of at each start.
import "../acp/run.js";
import "../acp/agent.js";
import "../acp/replay.js";
import "../run/index.js";
import "../sdk.js";

/** The file this script was built from: bundle/crow-snapshot.cjs, beside crow.js (a classic script has __filename). */
const builtFrom = __filename;

function failed(error: unknown): never {
  log.error("crow failed", error);
  process.exit(1);
}

function main(): void {
  const importer = nodeImporter(builtFrom);
  setModuleImporter(importer);
  startFromSnapshot({
    builtFrom,
    entry: "crow.js",
    importer,
    onFallback: (message) => log.debug(message),
    onError: failed,
    start: () => {
      log.debug(`started from the startup snapshot (${process.execArgv.join(" ")})`);
      const args = process.argv.slice(2);
      startToolserverEarly(args);
      prepareProcess();
      runCrowAndExit(args);
    },
  });
}

// The snapshot is taken once the event loop is empty: the parser of config.yaml is in it, loaded.
void preloadYaml();
startupSnapshot.setDeserializeMainFunction(main);
