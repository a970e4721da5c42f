// Bundles the two executables with esbuild, after `tsc -b` has built dist/: packages/mcp/bundle/crow-mcp.js and
// packages/agent/bundle/crow.js (each with lazily loaded chunks beside it), and the session viewer's page
// (packages/agent/bundle/viewer.js and viewer.css). Why: Node 20 loads an ESM graph module by
// module (the agent's is ~900 files), which was most of the time between spawning `crow acp` and a ready session and
// a good part of its memory. The package.json `bin` entries point here; dist/ stays the library (SDK) build.
import { chmodSync, rmSync } from "node:fs";
import path from "node:path";
import { build } from "esbuild";
import { common } from "./bundle-options.mjs";

const root = path.join(import.meta.dirname, "..");

const targets = [
  { pkg: "packages/mcp", name: "crow-mcp", entry: ["cli.js"] },
  { pkg: "packages/agent", name: "crow", entry: ["entry", "cli.js"] },
];

await Promise.all(
  targets.map(async ({ pkg, name, entry }) => {
    const outdir = path.join(root, pkg, "bundle");
    rmSync(outdir, { recursive: true, force: true });
    await build({
      ...common,
      entryPoints: { [name]: path.join(root, pkg, "dist", ...entry) },
      outdir,
      absWorkingDir: root,
    });
    // The package.json `bin`: a JavaScript file with a `#!/usr/bin/env node` line (npm's shims run it on every OS).
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
