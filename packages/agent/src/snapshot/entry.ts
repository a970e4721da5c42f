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
import { realpathSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { startupSnapshot } from "node:v8";
import vm from "node:vm";
import { type ModuleImporter, setModuleImporter } from "@crow/core";
import { runCrow } from "../command.js";
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

/**
 * `import()` through Node's own module loader, for the code compiled into the snapshot (which has none: see
 * packages/core/src/extensions/import-module.ts). Bare specifiers resolve from the bundle's directory.
 */
function nodeImporter(): ModuleImporter {
  // Node 20 and 22 call this loader experimental and warn on its first use; it is the documented way to give a
  // script import(), and the warning would reach `crow run`'s terminal whenever an extension loads.
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (String(warning).includes("USE_MAIN_CONTEXT_DEFAULT_LOADER")) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  const script = new vm.Script("(specifier) => import(specifier)", {
    filename: builtFrom,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return script.runInThisContext() as ModuleImporter;
}

/** Whether `entry` (the launcher's crow.js) is the crow.js beside the script this snapshot was built from. */
function builtForEntry(entry: string | undefined): boolean {
  if (entry === undefined) return false;
  try {
    return realpathSync(path.dirname(entry)) === realpathSync(path.dirname(builtFrom));
  } catch {
    return false;
  }
}

function main(): void {
  const importer = nodeImporter();
  setModuleImporter(importer);
  // argv[1] is the crow.js the launcher would have run. A blob built for another installation (one that moved, or
  // a stale cache) must not run its own copy of crow: that crow.js runs instead, as if there were no snapshot.
  if (!builtForEntry(process.argv[1])) {
    log.debug(`the startup snapshot was built for ${path.dirname(builtFrom)}: starting ${process.argv[1]} instead`);
    importer(pathToFileURL(process.argv[1] ?? path.join(path.dirname(builtFrom), "crow.js")).href).catch(
      (error: unknown) => {
        log.error("crow failed", error);
        process.exit(1);
      },
    );
    return;
  }
  log.debug(`started from the startup snapshot (${process.execArgv.join(" ")})`);
  const args = process.argv.slice(2);
  startToolserverEarly(args);
  prepareProcess();
  runCrow(args).then(
    (code) => process.exit(code),
    (error: unknown) => {
      log.error("crow failed", error);
      process.exit(1);
    },
  );
}

// The snapshot is taken once the event loop is empty: the parser of config.yaml is in it, loaded.
void preloadYaml();
startupSnapshot.setDeserializeMainFunction(main);
