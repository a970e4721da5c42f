/**
 * What the main function of a V8 startup snapshot of crow or crow-mcp does before the command runs
 * (packages/agent/src/snapshot/entry.ts, snapshot-entry.ts here). `crow` imports it as `@crow/mcp/snapshot-runtime`.
 *
 * The snapshot's code was compiled as one classic script while it was built, where `import()` has no module loader
 * behind it: `nodeImporter` gives it Node's own. And a blob is only valid beside the very script it was built from: a
 * start whose entry (argv[1]: the crow.js or crow-mcp.js that would have run without the snapshot) is elsewhere runs
 * that entry instead, as if there were no snapshot.
 */
import { realpathSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import vm from "node:vm";

/** `import()` of a URL or bare specifier, resolved from `referrer`'s directory. */
export type Importer = (specifier: string) => Promise<unknown>;

/** `import()` through Node's module loader, resolving bare specifiers from the directory of `referrer` (a file). */
export function nodeImporter(referrer: string): Importer {
  // Node 20 and 22 call this loader experimental and warn on its first use; it is the documented way to give a
  // script import(), and the warning would reach `crow run`'s terminal whenever an extension loads.
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: NodeJS.Process, warning: string | Error, ...rest: unknown[]) {
    if (String(warning).includes("USE_MAIN_CONTEXT_DEFAULT_LOADER")) return;
    return (emitWarning as (...args: unknown[]) => void).call(this, warning, ...rest);
  } as typeof process.emitWarning;
  const script = new vm.Script("(specifier) => import(specifier)", {
    filename: referrer,
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  return script.runInThisContext() as Importer;
}

/** Imports a file beside the snapshot script: set when the process starts from its snapshot. */
let besideSnapshot: Importer | undefined;

/**
 * Imports `file`, a chunk of the bundle beside the snapshot script, and resolves to its namespace: how a snapshot
 * script imports a module it leaves out (scripts/snapshot-deferred.mjs writes the calls). Only for a process started
 * from its snapshot.
 */
export function importBesideSnapshot(file: string): Promise<unknown> {
  if (!besideSnapshot) return Promise.reject(new Error(`cannot import ${file}: the startup snapshot has not started`));
  return besideSnapshot(file);
}

/** Whether `entry` sits beside `builtFrom` (the snapshot script), symbolic links resolved. */
function besideScript(entry: string | undefined, builtFrom: string): boolean {
  if (entry === undefined) return false;
  try {
    return realpathSync(path.dirname(entry)) === realpathSync(path.dirname(builtFrom));
  } catch {
    return false;
  }
}

/**
 * Starts from the snapshot: `start()` when argv[1] is the entry beside `builtFrom`, else imports argv[1] (or `entry`
 * beside the script when there is none) through `importer` and lets it run. `onError` reports a failed import.
 */
export function startFromSnapshot(options: {
  builtFrom: string;
  entry: string;
  importer: Importer;
  start: () => void;
  onFallback: (message: string) => void;
  onError: (error: unknown) => void;
}): void {
  const given = process.argv[1];
  if (besideScript(given, options.builtFrom)) {
    const dir = path.dirname(options.builtFrom);
    besideSnapshot = (file) => options.importer(pathToFileURL(path.join(dir, file)).href);
    options.start();
    return;
  }
  const entry = given ?? path.join(path.dirname(options.builtFrom), options.entry);
  options.onFallback(
    `the startup snapshot was built for ${path.dirname(options.builtFrom)}: starting ${entry} instead`,
  );
  options.importer(pathToFileURL(entry).href).catch(options.onError);
}
