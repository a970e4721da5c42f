// esbuild options shared by the workspace bundles (scripts/bundle.mjs) and the published package (scripts/pack.mjs),
// so both ship the same code.
import { createHash } from "node:crypto";
import { chmodSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { checkDeferred, deferredChunks, deferToBundle } from "./snapshot-deferred.mjs";

/**
 * zod re-exports all of its ~40 error-message locales as `z.locales` (360 KB, 10% of what the agent parses at
 * startup), and a namespace re-export cannot be tree-shaken. Crow only uses the English messages zod installs by
 * default, so the bundles get a `locales` namespace with `en` alone.
 */
export const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) => {
      if (!/[/\\]node_modules[/\\]zod[/\\]/.test(args.importer)) return undefined;
      return { path: path.join(path.dirname(args.importer), "..", "locales"), namespace: "zod-locales" };
    });
    build.onLoad({ filter: /.*/, namespace: "zod-locales" }, (args) => ({
      contents: 'export { default as en } from "./en.js";',
      resolveDir: args.path,
      loader: "js",
    }));
  },
};

/**
 * The MCP SDK's Client and Server each build an Ajv instance in their constructor and import Ajv (~185 kB) to do so,
 * for output schemas Crow's tools never declare. The bundles give the SDK Crow's drop-in validator instead
 * (packages/mcp/src/json-schema-validator.ts: same behaviour, Ajv require()d on the first validation).
 */
export const lazyJsonSchemaValidator = {
  name: "lazy-json-schema-validator",
  setup(build) {
    const root = path.join(import.meta.dirname, "..");
    build.onResolve({ filter: /[/\\]validation[/\\]ajv-provider\.js$/ }, (args) => {
      if (!/[/\\]node_modules[/\\]@modelcontextprotocol[/\\]sdk[/\\]/.test(args.importer)) return undefined;
      return { path: path.join(root, "packages/mcp/dist/json-schema-validator.js") };
    });
  },
};

/** Options shared by both executables. */
export const common = {
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20.19",
  // Lazy `import()`s (web_fetch's HTML stack, express, PostgreSQL, the CLI subcommands) stay separate chunks.
  splitting: true,
  // Native addons find their .node files relative to their own package; pg-native is pg's optional native driver.
  external: ["better-sqlite3", "@lydell/node-pty", "pg-native"],
  // CommonJS dependencies call require() for Node built-ins; ESM output has no `require` of its own.
  banner: {
    js: 'import { createRequire as __crowRequire } from "node:module"; const require = __crowRequire(import.meta.url);',
  },
  // Whitespace and syntax only: names stay, so stack traces still say which function failed. V8 keeps each loaded
  // chunk's source in memory (for lazy compilation), so this is ~2.5 MB less heap in the agent, and ~15 ms less to a
  // ready session.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: "none",
  plugins: [zodEnglishOnly, lazyJsonSchemaValidator],
  logLevel: "warning",
  // Flat: every output sits one level below the package root, where version.ts looks for ../package.json.
  chunkNames: "[name]-[hash]",
};

/**
 * Built-in modules that cannot be part of a V8 startup snapshot (node:http holds a native parser class: Node 20 fails
 * to load it while building one, Node 24 to serialize it). In crow's snapshot script they are stand-ins whose exports
 * load the real module on first use, so the code importing them is still evaluated (and compiled) in the snapshot.
 */
const SNAPSHOT_LAZY_BUILTINS = ["http", "https"];

const lazyBuiltins = {
  name: "snapshot-lazy-builtins",
  setup(build) {
    const filter = new RegExp(`^(node:)?(${SNAPSHOT_LAZY_BUILTINS.join("|")})$`);
    build.onResolve({ filter }, (args) =>
      // The stand-in's own require() is of the real module.
      args.namespace === "lazy-builtin"
        ? { path: args.path, external: true }
        : { path: args.path.replace(/^node:/, ""), namespace: "lazy-builtin" },
    );
    build.onLoad({ filter: /.*/, namespace: "lazy-builtin" }, async (args) => {
      const names = Object.keys(await import(`node:${args.path}`)).filter((name) => name !== "default");
      const id = JSON.stringify(`node:${args.path}`);
      return {
        contents: `let real;\nconst load = () => (real ??= require(${id}));\nfor (const name of ${JSON.stringify(names)}) Object.defineProperty(exports, name, { enumerable: true, get: () => load()[name] });\n`,
        loader: "js",
      };
    });
  },
};

/**
 * A startup snapshot script (packages/agent/src/snapshot/entry.ts → crow-snapshot.cjs,
 * packages/mcp/src/snapshot-entry.ts → crow-mcp-snapshot.cjs): the same code as the bundle, as the one classic script
 * `node --build-snapshot` takes. `import()` of the bundle's own modules is inlined (there are no chunks), of built-ins
 * a require(), of a module in SNAPSHOT_DEFERRED an import of the bundle's chunk for it (scripts/snapshot-deferred.mjs);
 * import.meta.url is the script's own file URL. `deferral` is deferToBundle's: which chunks, and where the deferred
 * ones are recorded.
 */
export function snapshotScriptOptions(entry, outfile, deferral) {
  return {
    ...common,
    format: "cjs",
    splitting: false,
    chunkNames: undefined,
    supported: { "dynamic-import": false },
    define: { "import.meta.url": "__crowSnapshotUrl" },
    banner: { js: 'var __crowSnapshotUrl = require("node:url").pathToFileURL(__filename).href;' },
    plugins: [deferToBundle(deferral), ...common.plugins, lazyBuiltins],
    entryPoints: [entry],
    outfile,
    metafile: true,
  };
}

/**
 * The script with every non-ASCII character written as a `\uXXXX` escape. V8 keeps a script's source in the heap (and
 * so in the snapshot) as one string, two bytes per character if a single one is beyond Latin-1: a few arrows and
 * ellipses in HTML templates and a regular expression made crow's 2 MB script 4 MB of every process started from it.
 * esbuild escapes every other string already; what is left is in cooked template literals and regular expressions
 * (comments are gone), where the escape means the same character.
 */
function asciiOnly(text) {
  return text.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/**
 * Writes the snapshot scripts of both executables into `agentOut` and `mcpOut` (beside crow.js and crow-mcp.js),
 * each with its build id: the first 12 hex digits of the SHA-256 of the script and the version, so a blob is only
 * ever used with the very script (and version) it was built from. crow's id goes into the `crow` launcher
 * (packages/agent/src/snapshot/launcher.sh), crow-mcp's into crow-mcp-snapshot.id, which crow reads before it starts
 * its toolserver from a blob. `agentMeta` and `mcpMeta` are the metafiles of the ESM bundles in those directories
 * (built from `root`), whose chunks the scripts import for the modules they leave out (SNAPSHOT_DEFERRED).
 */
export async function buildSnapshotScripts({ root, agentOut, mcpOut, agentMeta, mcpMeta }) {
  const { build } = await import("esbuild");
  // The version too: a snapshot holds the version read from package.json when it was built, and a release may
  // change nothing else.
  const { version } = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const id = (file) => createHash("sha256").update(readFileSync(file)).update(version).digest("hex").slice(0, 12);
  const agentScript = path.join(agentOut, "crow-snapshot.cjs");
  const mcpScript = path.join(mcpOut, "crow-mcp-snapshot.cjs");
  const used = new Set();
  const runtime = path.join(root, "packages/mcp/dist/snapshot-runtime.js");
  const deferral = (meta) => ({ chunks: deferredChunks(meta, root), runtime, used });
  const script = (entry, outfile, meta) =>
    build({ ...snapshotScriptOptions(path.join(root, entry), outfile, deferral(meta)), absWorkingDir: root });
  const results = await Promise.all([
    script("packages/agent/dist/snapshot/entry.js", agentScript, agentMeta),
    script("packages/mcp/dist/snapshot-entry.js", mcpScript, mcpMeta),
  ]);
  const inputs = new Set(
    results.flatMap((r) => Object.keys(r.metafile.inputs).map((file) => path.resolve(root, file))),
  );
  checkDeferred({ root, used, inputs });
  for (const script of [agentScript, mcpScript]) writeFileSync(script, asciiOnly(readFileSync(script, "utf8")));
  writeFileSync(path.join(mcpOut, "crow-mcp-snapshot.id"), `${id(mcpScript)}\n`);
  const launcherSource = path.join(root, "packages/agent/src/snapshot/launcher.sh");
  const launcher = path.join(agentOut, "crow");
  writeFileSync(launcher, readFileSync(launcherSource, "utf8").replaceAll("@BUILD@", id(agentScript)));
  chmodSync(launcher, 0o755);
}
