// Builds the published package and packs it: `npm run pack [-- --out DIR]` prints the tarball's absolute path.
//
// Crow is published as ONE package, `crow-agent` (the name people type: `npx crow-agent acp`), holding both
// executables as esbuild bundles built from the workspaces' dist/ (run `npm run build` first) into one flat bundle/
// directory, so the two share their common chunks. Installing it builds nothing of Crow's and installs no dev
// dependency: its only dependencies are the packages the bundles load at run time from node_modules (below). The
// version is the root package.json's, the one place it is set; the workspaces must carry the same (the packaging
// test checks).
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import { common } from "./bundle-options.mjs";

const root = path.resolve(import.meta.dirname, "..");
const { values } = parseArgs({ options: { out: { type: "string" } } });
const out = path.resolve(values.out ?? path.join(root, ".pack"));

/** The published name; also the name of a third bin, so `npx crow-agent …` (which runs the bin named like the package) is `crow …`. */
const PACKAGE_NAME = "crow-agent";

/**
 * What the bundles load from node_modules at run time, and why: native addons find their .node files relative to
 * their own package (better-sqlite3 compiles at install where no prebuilt binary fits; @lydell/node-pty ships
 * prebuilt per-platform packages), the config loader require()s yaml and the MCP SDK's JSON Schema validator
 * (packages/mcp/src/process/json-schema-validator.ts) require()s ajv and ajv-formats synchronously, which esbuild leaves as is;
 * so does the prompt renderer with nunjucks, which only a user's own system prompt template outside the built-in
 * one's subset loads (packages/core/src/prompt/template.ts). Everything else (pg included) is inside the bundles.
 * pg-native is pg's optional native driver, never used.
 */
const RUNTIME_DEPENDENCIES = ["better-sqlite3", "@lydell/node-pty", "yaml", "ajv", "ajv-formats", "nunjucks"];
/**
 * Runtime dependencies an install may fail to build without failing: better-sqlite3 is the store's driver only where
 * Node has no `node:sqlite` (Node 20); on Node 22.13+ and 24 an install with no C++ toolchain, no Node headers and no
 * network for prebuilt binaries must still succeed (the packaging test checks it).
 */
const OPTIONAL_RUNTIME_DEPENDENCIES = new Set(["better-sqlite3"]);
const OPTIONAL_EXTERNALS = ["pg-native"];

const readJson = (file) => JSON.parse(readFileSync(file, "utf8"));
const rootManifest = readJson(path.join(root, "package.json"));
const workspaces = rootManifest.workspaces.map((dir) => readJson(path.join(root, dir, "package.json")));

for (const external of common.external) {
  if (!RUNTIME_DEPENDENCIES.includes(external) && !OPTIONAL_EXTERNALS.includes(external)) {
    throw new Error(`pack: the bundles leave "${external}" external but the package would not depend on it`);
  }
}

/** The version range the workspaces declare for `name` (they must agree: the package installs one copy). */
function declaredRange(name) {
  const ranges = new Set(
    workspaces.map((m) => m.dependencies?.[name] ?? m.optionalDependencies?.[name]).filter((r) => r !== undefined),
  );
  if (ranges.size !== 1) {
    throw new Error(`pack: the workspaces declare ${ranges.size === 0 ? "no" : "different"} versions of ${name}`);
  }
  return [...ranges][0];
}

const manifest = {
  name: PACKAGE_NAME,
  version: rootManifest.version,
  description: rootManifest.description,
  keywords: ["acp", "agent-client-protocol", "mcp", "coding-agent", "llm", "openai", "zed"],
  license: rootManifest.license,
  type: "module",
  engines: rootManifest.engines,
  // JavaScript files with a `#!/usr/bin/env node` line: npm's shims run them on every OS.
  bin: { [PACKAGE_NAME]: "bundle/crow.js", crow: "bundle/crow.js", "crow-mcp": "bundle/crow-mcp.js" },
  files: ["bundle", "README.md", "docs"],
  dependencies: Object.fromEntries(
    RUNTIME_DEPENDENCIES.filter((name) => !OPTIONAL_RUNTIME_DEPENDENCIES.has(name)).map((name) => [
      name,
      declaredRange(name),
    ]),
  ),
  optionalDependencies: Object.fromEntries(
    [...OPTIONAL_RUNTIME_DEPENDENCIES].map((name) => [name, declaredRange(name)]),
  ),
};

const stage = path.join(out, "package");
rmSync(stage, { recursive: true, force: true });
mkdirSync(stage, { recursive: true });
await build({
  ...common,
  absWorkingDir: root,
  entryPoints: {
    crow: path.join(root, "packages/agent/dist/entry/cli.js"),
    "crow-mcp": path.join(root, "packages/mcp/dist/cli.js"),
  },
  outdir: path.join(stage, "bundle"),
});
for (const bin of ["crow", "crow-mcp"]) chmodSync(path.join(stage, "bundle", `${bin}.js`), 0o755);
// The session viewer's browser page (`crow sessions serve` serves bundle/viewer.js and viewer.css), as the workspace
// build made it: browser code, the same in every layout.
for (const asset of ["viewer.js", "viewer.css"]) {
  copyFileSync(path.join(root, "packages/agent/bundle", asset), path.join(stage, "bundle", asset));
}
writeFileSync(path.join(stage, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
copyFileSync(path.join(root, "README.md"), path.join(stage, "README.md"));
// The README is a front page linking docs/*.md (and crow's hints name those pages): they ship beside it, with the
// picture one of them shows.
mkdirSync(path.join(stage, "docs"));
for (const page of readdirSync(path.join(root, "docs"))) {
  if (page.endsWith(".md") || page.endsWith(".png"))
    copyFileSync(path.join(root, "docs", page), path.join(stage, "docs", page));
}

for (const old of readdirSync(out)) if (old.endsWith(".tgz")) rmSync(path.join(out, old));
const packed = JSON.parse(
  execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: stage, encoding: "utf8" }),
);
console.log(path.join(out, packed[0].filename));
