/**
 * Builds crow's startup snapshots for the Node running it: `node crow-snapshot-build.js <blob>` (bundled beside
 * crow.js; spawned detached by request.ts). It runs bundle/crow-snapshot.cjs under `node --build-snapshot` into a
 * temporary file, checks that a start from it works (`crow --version` answers this version), and only then moves it to
 * <blob>, where the launcher finds it; then the same for the shared crow-mcp's blob (toolserver.ts). A build that
 * fails leaves `<blob>.failed` (the error) so that starts do not try again and again with this node; deleting the
 * file, or a newer node, allows a new try.
 *
 * One build at a time per blob (`<blob>.lock`); at low priority, so it does not slow down the start that asked for it.
 */
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { setPriority } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { crowCacheDir } from "@crow/mcp/compile-cache";
import { builtinServerPath } from "../tools/servers.js";
import { VERSION } from "../version.js";
import { blobFits, buildFailed, TOOLSERVER_NODE_FLAGS, toolserverBlobPath } from "./toolserver.js";

/** A lock older than this belongs to a builder that died: a build takes seconds. */
const STALE_LOCK_MS = 10 * 60_000;
const BUILD_TIMEOUT_MS = 5 * 60_000;

/** Takes `<blob>.lock`; false when another live builder holds it. */
function lock(file: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      closeSync(openSync(file, "wx"));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      if (Date.now() - statSync(file).mtimeMs < STALE_LOCK_MS) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

/** The environment of the build and check: the user's NODE_OPTIONS would change V8's flags (see entry.ts). */
function buildEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  return env;
}

function run(args: string[], what: string): string {
  const result = spawnSync(process.execPath, args, {
    env: buildEnv(),
    encoding: "utf8",
    timeout: BUILD_TIMEOUT_MS,
    stdio: ["ignore", "pipe", "pipe"],
  });
  if (result.error) throw new Error(`${what}: ${result.error.message}`);
  if (result.status !== 0) {
    throw new Error(`${what} exited with ${result.status ?? result.signal}:\n${result.stderr.slice(-4000)}`);
  }
  return result.stdout;
}

/**
 * Removes the other builds' blobs (and failure notes) beside `blob`: the launcher keeps one directory per
 * installation directory and node (`<cache>/crow/snapshot/<dir>/<node>/<build>.blob`), so any other build there is a
 * crow that was upgraded in place, which no launcher asks for any more.
 */
function removeOtherBuilds(blob: string): void {
  const own = path.basename(blob, ".blob");
  for (const name of readdirSync(path.dirname(blob))) {
    if ((name.endsWith(".blob") || name.endsWith(".blob.failed")) && !name.startsWith(`${own}.`)) {
      rmSync(path.join(path.dirname(blob), name), { force: true });
    }
  }
}

/**
 * Removes the blobs (and failure notes) of installations that are gone: each is at
 * `<root>/<installation directory>/<node's path>/<build>.blob`, and an installation directory holds crow.js or
 * crow-mcp.js. Every `npx crow-agent@<version>` is a directory of its own, so without this the cache would keep ~20 MB
 * for each version ever run.
 */
function removeOrphans(root: string): void {
  for (const name of readdirSync(root, { recursive: true, encoding: "utf8" })) {
    if (!name.endsWith(".blob") && !name.endsWith(".blob.failed")) continue;
    const segments = path.dirname(name).split(path.sep);
    const installed = segments.some((_, i) => {
      const dir = path.join(path.sep, ...segments.slice(0, i + 1));
      return existsSync(path.join(dir, "crow.js")) || existsSync(path.join(dir, "crow-mcp.js"));
    });
    if (!installed) rmSync(path.join(root, name), { force: true });
  }
}

/** One snapshot to build: the script, the entry beside it that answers `--version`, and the node flags of its use. */
interface Target {
  blob: string;
  script: string;
  entry: string;
  flags: readonly string[];
}

/** Builds the target's blob for the node running this; throws what went wrong. */
function buildSnapshot({ blob, script, entry, flags }: Target): void {
  const temporary = `${blob}.${process.pid}.tmp`;
  try {
    run([...flags, "--snapshot-blob", temporary, "--build-snapshot", script], "node --build-snapshot");
    const answer = run([...flags, "--snapshot-blob", temporary, entry, "--version"], "the check start").trim();
    if (answer !== VERSION) throw new Error(`the check start answered "${answer}" to --version, not "${VERSION}"`);
    renameSync(temporary, blob);
    removeOtherBuilds(blob);
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** Builds the target unless another builder is at it; a failure is written to `<blob>.failed`. */
function buildOnce(target: Target): boolean {
  const { blob } = target;
  try {
    mkdirSync(path.dirname(blob), { recursive: true });
    if (!lock(`${blob}.lock`)) return true;
  } catch {
    // An unwritable cache: no snapshot, and nowhere to say why (the start that asked is not waiting).
    return false;
  }
  try {
    buildSnapshot(target);
    return true;
  } catch (error) {
    writeFileSync(`${blob}.failed`, `${error instanceof Error ? error.message : String(error)}\n`);
    return false;
  } finally {
    rmSync(`${blob}.lock`, { force: true });
  }
}

/**
 * The builder's command line: `crow-snapshot-build.js <blob>` builds crow's blob there, then the shared crow-mcp's
 * (where toolserver.ts looks for it) when it has none that fits. Exits 0 when both are built, 1 when not (see the
 * `.failed` files).
 */
function main(): number {
  const blob = process.argv[2];
  if (!blob || !path.isAbsolute(blob)) {
    process.stderr.write("usage: crow-snapshot-build.js <absolute path of the blob to build>\n");
    return 2;
  }
  try {
    setPriority(19);
  } catch {
    // Not allowed to lower it: build anyway.
  }
  const bundleDir = path.dirname(fileURLToPath(import.meta.url));
  let built = buildOnce({
    blob,
    script: path.join(bundleDir, "crow-snapshot.cjs"),
    entry: path.join(bundleDir, "crow.js"),
    flags: [],
  });
  const serverPath = builtinServerPath();
  const serverBlob = toolserverBlobPath(serverPath);
  if (serverBlob && !blobFits(serverBlob) && !buildFailed(serverBlob)) {
    built =
      buildOnce({
        blob: serverBlob,
        script: path.join(path.dirname(serverPath), "crow-mcp-snapshot.cjs"),
        entry: serverPath,
        flags: TOOLSERVER_NODE_FLAGS,
      }) && built;
  }
  try {
    const root = path.join(crowCacheDir(), "snapshot");
    if (blob.startsWith(root + path.sep)) removeOrphans(root);
  } catch {
    // Tidying is not building.
  }
  return built ? 0 : 1;
}

process.exitCode = main();
