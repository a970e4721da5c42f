// esbuild options shared by the workspace bundles (scripts/bundle.mjs) and the published package (scripts/pack.mjs),
// so both ship the same code.
import path from "node:path";

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
 * (packages/mcp/src/process/json-schema-validator.ts: same behaviour, Ajv require()d on the first validation).
 */
export const lazyJsonSchemaValidator = {
  name: "lazy-json-schema-validator",
  setup(build) {
    const root = path.join(import.meta.dirname, "..");
    build.onResolve({ filter: /[/\\]validation[/\\]ajv-provider\.js$/ }, (args) => {
      if (!/[/\\]node_modules[/\\]@modelcontextprotocol[/\\]sdk[/\\]/.test(args.importer)) return undefined;
      return { path: path.join(root, "packages/mcp/dist/process/json-schema-validator.js") };
    });
  },
};

/**
 * The MCP SDK accepts Zod 3 schemas too: its server keeps Zod 3 (`zod/v3`, to build an object schema from a shape of
 * Zod 3 schemas) and a Zod 3 to JSON Schema converter (`zod-to-json-schema`), ~95 kB that crow-mcp parsed at every
 * start. Every schema Crow gives the SDK is Zod 4 (the SDK takes the Zod 4 branch, decided per schema), so the bundles
 * get stand-ins that say so if a Zod 3 schema ever reaches them.
 */
export const mcpZod4Only = {
  name: "mcp-zod4-only",
  setup(build) {
    const fromMcpSdk = (importer) => /[/\\]node_modules[/\\]@modelcontextprotocol[/\\]sdk[/\\]/.test(importer);
    build.onResolve({ filter: /^(zod\/v3|zod-to-json-schema)$/ }, (args) =>
      fromMcpSdk(args.importer) ? { path: args.path, namespace: "mcp-zod4-only" } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: "mcp-zod4-only" }, (args) => {
      const name = args.path === "zod/v3" ? "object" : "zodToJsonSchema";
      return {
        contents: `export function ${name}() { throw new Error("Crow's bundle has no Zod 3 (${args.path}): give the MCP SDK Zod 4 schemas"); }`,
        loader: "js",
      };
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
  plugins: [zodEnglishOnly, lazyJsonSchemaValidator, mcpZod4Only],
  // unique-names-generator's `main` is one CommonJS file with all nine dictionaries (67 kB: names, countries, Star Wars
  // characters…), parsed and built at every start for the three that session ids use. Its ES module build lets the
  // unused ones be left out (18 kB).
  alias: { "unique-names-generator": "unique-names-generator/dist/index.m.js" },
  logLevel: "warning",
  // Flat: every output sits in bundle/, one level below the package root.
  chunkNames: "[name]-[hash]",
};
