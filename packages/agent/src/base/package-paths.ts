/**
 * Where this installation's files are. Crow runs from four layouts — TypeScript sources (tests), tsc's `dist/`, the
 * esbuild bundles of the workspace packages (`packages/*\/bundle`) and the published single package (both bundles in
 * one `bundle/`, one package.json declaring `crow` and `crow-mcp`) — so nothing may assume how deep the running module
 * sits or what its package is called: paths are found by walking up to the nearest package.json and reading what it
 * declares.
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

/** The root directory of the package containing `file`: the nearest directory above it with a package.json. */
export function ownPackageRoot(file: string): string {
  let dir = path.dirname(file);
  for (;;) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the package of this installation (no package.json above ${file})`);
    dir = parent;
  }
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

/** Absolute path of the executable `bin` that the package rooted at `root` declares, or undefined when it has none. */
export function declaredBin(root: string, bin: string): string | undefined {
  const entry = readManifest(root)?.bin?.[bin];
  return entry ? path.join(root, entry) : undefined;
}

/** Absolute path of the executable `bin` that package `name` (rooted at `root`) declares in its package.json. */
export function packageBin(root: string, name: string, bin: string): string {
  const found = declaredBin(root, bin);
  if (!found) throw new Error(`${name} at ${root} declares no "${bin}" executable`);
  return found;
}
