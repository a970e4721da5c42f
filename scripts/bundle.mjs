// Bundles the two executables with esbuild, after `tsc -b` has built dist/: packages/mcp/bundle/crow-mcp.js and
// packages/agent/bundle/crow.js (each with lazily loaded chunks beside it), and the session viewer's page
// (packages/agent/bundle/viewer.js and viewer.css). Why: Node 20 loads an ESM graph module by
// module (the agent's is ~900 files), which was most of the time between spawning `crow acp` and a ready session and
// a good part of its memory. The package.json `bin` entries point here; dist/ stays the library (SDK) build.
import { chmodSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";

const root = path.join(import.meta.dirname, "..");

/**
 * zod re-exports all of its ~40 error-message locales as `z.locales` (360 KB, 10% of what the agent parses at
 * startup), and a namespace re-export cannot be tree-shaken. Crow only uses the English messages zod installs by
 * default, so the bundles get a `locales` namespace with `en` alone.
 */
const zodEnglishOnly = {
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

/** Options shared by both executables. */
const common = {
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
  plugins: [zodEnglishOnly],
  logLevel: "warning",
};

const targets = [
  { pkg: "packages/mcp", name: "crow-mcp" },
  { pkg: "packages/agent", name: "crow" },
];

await Promise.all(
  targets.map(async ({ pkg, name }) => {
    const outdir = path.join(root, pkg, "bundle");
    rmSync(outdir, { recursive: true, force: true });
    await build({
      ...common,
      entryPoints: { [name]: path.join(root, pkg, "dist", "cli.js") },
      outdir,
      // Flat: every output sits one level below the package root, where version.ts looks for ../package.json.
      chunkNames: "[name]-[hash]",
    });
    chmodSync(path.join(outdir, `${name}.js`), 0o755);
  }),
);

// The session viewer's page script and stylesheet (`crow sessions serve` serves them from /assets): plain TypeScript
// and uPlot, for the browser, written beside the agent's bundle after it (the agent's build clears bundle/ first).
await build({
  entryPoints: { viewer: path.join(root, "packages/agent/viewer-page/main.ts") },
  outdir: path.join(root, "packages/agent/bundle"),
  bundle: true,
  platform: "browser",
  format: "esm",
  target: "es2020",
  minify: true,
  legalComments: "none",
  logLevel: "warning",
});
