/**
 * Where this installation's files are. Crow runs from three layouts — TypeScript sources (tests), tsc's `dist/` and
 * the esbuild bundles in `bundle/` — so nothing may assume how deep the running module sits: paths are found by
 * walking up to the package's own package.json and reading what it declares.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";

interface Manifest {
  name?: string;
  bin?: Record<string, string>;
}

function readManifest(dir: string): Manifest | undefined {
  const file = path.join(dir, "package.json");
  if (!existsSync(file)) return undefined;
  return JSON.parse(readFileSync(file, "utf8")) as Manifest;
}

/** The root directory of package `name` containing `file` (a module of that package). Throws when there is none. */
export function packageRoot(file: string, name: string): string {
  let dir = path.dirname(file);
  for (;;) {
    if (readManifest(dir)?.name === name) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the ${name} package of this installation (from ${file})`);
    dir = parent;
  }
}

/** Absolute path of the executable `bin` that package `name` (rooted at `root`) declares in its package.json. */
export function packageBin(root: string, name: string, bin: string): string {
  const entry = readManifest(root)?.bin?.[bin];
  if (!entry) throw new Error(`${name} at ${root} declares no "${bin}" executable`);
  return path.join(root, entry);
}
