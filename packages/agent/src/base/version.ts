import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ownPackageRoot } from "./package-paths.js";

/**
 * The package version, read once from package.json so `--version` and `initialize` never disagree. Found by walking
 * up from this module: it sits at a different depth in the sources, dist/ and the bundles.
 */
export const VERSION: string = (
  JSON.parse(readFileSync(path.join(ownPackageRoot(fileURLToPath(import.meta.url)), "package.json"), "utf8")) as {
    version: string;
  }
).version;
