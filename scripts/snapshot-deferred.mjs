// Modules the startup snapshot scripts leave out and import from the bundle's own chunk when first needed.
//
// Why: Node keeps a snapshot's whole blob in memory for the life of the process (it reads the file into a buffer that
// V8 may need again), and the heap deserialized from it holds the snapshot script's source once more (V8 compiles
// functions lazily from it). So every byte of a snapshot script costs about two bytes of RSS in every process started
// from it, whether or not that code ever runs. The modules below are large, reached only through `import()`, and
// rarely by a process started from a snapshot: in those scripts, their `import()` loads the chunk the ESM bundle
// already has for them (through Node's loader, see importBesideSnapshot in packages/mcp/src/snapshot-runtime.ts).
// Each must be self-contained, sharing no state with the code that imports it: the chunk brings its own copy of
// whatever it imports.
import path from "node:path";

/** Source modules (as the bundles' metafiles name them, relative to the repository root) left out of the snapshots. */
export const SNAPSHOT_DEFERRED = [
  // crow-mcp --http (express, its body parsers and iconv-lite: ~1 MB); crow starts its crow-mcp with --socket.
  "packages/mcp/dist/http.js",
  // web_fetch's HTML → Markdown (linkedom, Readability: ~540 kB), loaded by its first fetched page.
  "packages/mcp/dist/web/convert.js",
  // The LLM client's error types (~250 kB), loaded when a request first fails.
  "node_modules/openai/index.mjs",
  // PostgreSQL's driver (~100 kB), for a store at a postgres:// URL.
  "node_modules/pg/esm/index.mjs",
];

/**
 * The chunk of each deferred module in an ESM bundle: absolute source path → the chunk's file name (beside the
 * bundle's entry, where the snapshot script is written too). `metafile` is the bundle build's, built with
 * absWorkingDir `root` (its paths are relative to it).
 */
export function deferredChunks(metafile, root) {
  const wanted = new Set(SNAPSHOT_DEFERRED.map((file) => path.join(root, file)));
  const chunks = new Map();
  for (const [output, { entryPoint }] of Object.entries(metafile.outputs)) {
    const source = entryPoint && path.resolve(root, entryPoint);
    if (source && wanted.has(source)) chunks.set(source, path.basename(output));
  }
  return chunks;
}

const SKIP = Symbol("resolving a deferred import");

/**
 * The esbuild plugin of a snapshot script: an `import()` of a module in `chunks` resolves to a stand-in whose
 * namespace is a thenable, so that the `import()` settles with the bundle chunk's own namespace, imported through
 * `runtime`'s importBesideSnapshot (the JavaScript rule for a namespace with a `then` export: `import()` adopts it).
 * `used` collects the modules it deferred.
 */
export function deferToBundle({ chunks, runtime, used }) {
  return {
    name: "snapshot-deferred-imports",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== "dynamic-import" || args.pluginData === SKIP) return undefined;
        const resolved = await build.resolve(args.path, {
          kind: args.kind,
          importer: args.importer,
          resolveDir: args.resolveDir,
          pluginData: SKIP,
        });
        const chunk = chunks.get(resolved.path);
        if (resolved.errors.length > 0 || chunk === undefined) return undefined;
        used.add(resolved.path);
        return { path: chunk, namespace: "snapshot-deferred" };
      });
      build.onLoad({ filter: /.*/, namespace: "snapshot-deferred" }, (args) => ({
        contents: [
          `import { importBesideSnapshot } from ${JSON.stringify(runtime)};`,
          `export const then = (loaded, failed) => importBesideSnapshot(${JSON.stringify(args.path)}).then(loaded, failed);`,
        ].join("\n"),
        loader: "js",
        resolveDir: path.dirname(runtime),
      }));
    },
  };
}

/**
 * Fails when the deferral did not happen as listed: a module of SNAPSHOT_DEFERRED that no snapshot script imports
 * with `import()` any more (a stale entry), or one that a script holds anyway (imported statically somewhere too,
 * so the script would carry it and load the chunk as a second copy). `inputs` are the snapshot builds' metafile
 * inputs (absolute paths).
 */
export function checkDeferred({ root, used, inputs }) {
  for (const file of SNAPSHOT_DEFERRED) {
    const source = path.join(root, file);
    if (!used.has(source)) {
      throw new Error(`${file} is listed in SNAPSHOT_DEFERRED, but no snapshot script imports it with import()`);
    }
    if (inputs.has(source)) {
      throw new Error(`${file} is deferred, yet a snapshot script imports it statically as well`);
    }
  }
}
