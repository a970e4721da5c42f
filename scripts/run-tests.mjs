// Runs every test file of the workspace with node's test runner (TypeScript through tsx) and ends the output with
// one line "N passed, N failed[, N skipped]". Arguments filter test files by substring, e.g.
//   node scripts/run-tests.mjs edit terminal
// `--shuffle` (or CROW_TEST_SHUFFLE=random) runs the files, and the tests inside each file, in a random order and
// prints its seed; `--shuffle=SEED` (CROW_TEST_SHUFFLE=SEED) replays that order. See scripts/test-shuffle.mjs.
// The tests run with HOME set to an empty temp directory; anything left in it fails the run (tests leave HOME alone).
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { availableParallelism, homedir, loadavg, tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..");
const SHUFFLE = /^--shuffle(?:=(.*))?$/;
const filters = process.argv.slice(2).filter((arg) => !SHUFFLE.test(arg));

/**
 * The shuffle seed (an integer), or undefined for the usual order: the last `--shuffle[=SEED]`, else
 * CROW_TEST_SHUFFLE. No seed, or `random`, draws one; 0 or `off` is the usual order.
 */
function shuffleSeed() {
  const given = process.argv
    .slice(2)
    .map((arg) => SHUFFLE.exec(arg))
    .filter(Boolean)
    .map((match) => match[1] || "random")
    .at(-1);
  const wanted = given ?? process.env.CROW_TEST_SHUFFLE?.trim();
  if (!wanted || wanted === "0" || wanted === "off") return undefined;
  if (wanted === "random") return 1 + Math.floor(Math.random() * 2 ** 31);
  const seed = Number(wanted);
  if (!Number.isSafeInteger(seed)) {
    console.error(`--shuffle / CROW_TEST_SHUFFLE: expected an integer seed or "random", got ${wanted}`);
    process.exit(2);
  }
  return seed;
}
const seed = shuffleSeed();
const replay = `--shuffle=${seed} ${filters.join(" ")}`.trim();

function findTests(dir) {
  const found = [];
  for (const entry of readdirSync(dir)) {
    if (entry === "node_modules" || entry === "dist" || entry === "fixtures") continue;
    const full = path.join(dir, entry);
    if (statSync(full).isDirectory()) found.push(...findTests(full));
    else if (entry.endsWith(".test.ts")) found.push(full);
  }
  return found;
}

const files = readdirSync(path.join(root, "packages"))
  .flatMap((pkg) => {
    const testDir = path.join(root, "packages", pkg, "test");
    try {
      return findTests(testDir);
    } catch {
      return [];
    }
  })
  // Matched against the path inside the repository (the checkout's own path may contain any word).
  .filter((file) => filters.length === 0 || filters.some((f) => path.relative(root, file).includes(f)))
  .sort();
if (seed !== undefined) {
  // The files' order too (they run three at a time: which ones share the machine, and HOME, changes with it).
  let a = seed >>> 0;
  const random = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = files.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [files[i], files[j]] = [files[j], files[i]];
  }
  console.log(`shuffled order, seed ${seed} (replay: node scripts/run-tests.mjs ${replay})`);
}

if (files.length === 0) {
  console.error(`no test files match ${filters.join(" ")}`);
  process.exit(1);
}

/**
 * Files that may run longer than the per-file limit: the packaging test installs the published package with npm,
 * which compiles better-sqlite3 (minutes on a loaded 2-core machine). They run in a second runner with a longer limit.
 */
const LONG_FILES = [/packaging\.test\.ts$/];

/**
 * The per-file limit, there to end a file that hangs, must not be reachable by a healthy one on a busy machine.
 * The slowest healthy files take up to ~145 s alone on an idle 2-core machine (acp-rewind-race 106–144 s, eval
 * 76–99 s, measured for issue #52), so the base is 300 s, about twice that. Their time is mostly CPU, which a loaded
 * machine shares out: at load 15 on 2 cores both went past the old flat 180 s. So the base is multiplied by the
 * machine's load per core when the run starts (1-minute load average over the cores; at least 1, at most 4: a hung
 * file still ends within 20 minutes). `CROW_TEST_FILE_TIMEOUT` (seconds) sets the limit outright.
 */
function fileLimitMs(baseMs) {
  const given = Number(process.env.CROW_TEST_FILE_TIMEOUT);
  if (Number.isFinite(given) && given > 0) return Math.round(given * 1000);
  const perCore = loadavg()[0] / Math.max(1, availableParallelism());
  return Math.round(baseMs * Math.min(4, Math.max(1, perCore)));
}
const fileLimit = fileLimitMs(300_000);
const groups = [
  { files: files.filter((f) => !LONG_FILES.some((re) => re.test(f))), timeout: fileLimit },
  { files: files.filter((f) => LONG_FILES.some((re) => re.test(f))), timeout: Math.max(1_500_000, fileLimit) },
].filter((group) => group.files.length > 0);
if (fileLimit > 300_000) {
  console.log(
    `per-file limit ${Math.round(fileLimit / 1000)} s (load ${loadavg()[0].toFixed(1)} on ${availableParallelism()} cores)`,
  );
}

const tmp = mkdtempSync(path.join(tmpdir(), "crow-test-summary-"));
// Tests must leave the real HOME alone: the suite runs with HOME pointed at an empty directory, and whatever a test
// (or a shell, python3 -i, an agent it started without a temp HOME of its own) leaves there fails the run.
const home = path.join(tmp, "home");
mkdirSync(home);
// npm run by a test (the packaging test installs the published package) keeps the caller's settings and cache.
const npmEnv = {
  npm_config_userconfig: process.env.npm_config_userconfig ?? path.join(homedir(), ".npmrc"),
  npm_config_cache: process.env.npm_config_cache ?? path.join(homedir(), ".npm"),
};
// Node >= 22 keeps the executables' compile cache under HOME (~/.cache/crow/compile-cache). Every Node the tests
// start caches in one temp directory instead (Node's own NODE_COMPILE_CACHE, which Crow leaves alone): a test's agent
// with the runner's HOME does not write there, and a detached crow-mcp that flushes its cache as it exits, just after
// its agent, does not race the removal of that agent's temp HOME (ENOTEMPTY). The compile-cache test unsets it.
const compileCache = path.join(tmp, "compile-cache");
// Language servers check every write and edit of a .ts or .py file (crow-mcp's lsp/): a test about something else
// must not depend on which of them this machine has, so they are off unless a test turns them on (the lsp tests do).
const lsp = process.env.CROW_LSP ?? "off";
const counts = { passed: 0, failed: 0, skipped: 0, todo: 0, skipReasons: [], fileMs: {} };
for (const [index, group] of groups.entries()) {
  const summaryFile = path.join(tmp, `summary-${index}.json`);
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      ...(seed === undefined ? [] : ["--import", path.join(root, "scripts", "test-shuffle.mjs")]),
      "--conditions=@crow/source",
      "--test",
      `--test-concurrency=${process.env.CROW_TEST_CONCURRENCY ?? 3}`,
      `--test-timeout=${group.timeout}`,
      "--test-reporter=spec",
      "--test-reporter-destination=stdout",
      `--test-reporter=${path.join(root, "scripts", "summary-reporter.mjs")}`,
      `--test-reporter-destination=${summaryFile}`,
      ...group.files.map((f) => path.relative(root, f)),
    ],
    {
      cwd: root,
      stdio: "inherit",
      env: {
        ...process.env,
        ...npmEnv,
        HOME: home,
        NODE_COMPILE_CACHE: compileCache,
        CROW_LSP: lsp,
        ...(seed === undefined ? {} : { CROW_TEST_SHUFFLE_SEED: String(seed) }),
      },
    },
  );
  let part;
  try {
    part = JSON.parse(readFileSync(summaryFile, "utf8"));
  } catch {
    part = { passed: 0, failed: 1, skipped: 0, todo: 0, skipReasons: [], fileMs: {} };
    console.error("the test runner did not produce a summary (crashed?)");
  }
  if (result.status !== 0 && part.failed === 0) part.failed = 1;
  counts.passed += part.passed;
  counts.failed += part.failed;
  counts.skipped += part.skipped;
  counts.skipReasons.push(...part.skipReasons);
  Object.assign(counts.fileMs, part.fileMs);
}

/** Paths under `dir` (relative), depth first. */
function listTree(dir, prefix = "") {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(prefix, entry.name);
    return entry.isDirectory() ? [rel, ...listTree(path.join(dir, entry.name), rel)] : [rel];
  });
}
const leftInHome = listTree(home);

rmSync(tmp, { recursive: true, force: true });
// The slowest files, so a suite that grows slow says where (the files run three at a time: these are not additive).
const slowest = Object.entries(counts.fileMs)
  .sort(([, a], [, b]) => b - a)
  .slice(0, 10);
if (files.length > 10) {
  console.log("slowest test files:");
  for (const [file, ms] of slowest)
    console.log(`  ${(ms / 1000).toFixed(1).padStart(6)} s  ${path.relative(root, file)}`);
}
for (const reason of counts.skipReasons) console.log(`skipped: ${reason}`);
if (leftInHome.length > 0) {
  console.log(
    `tests wrote to HOME (give the process that wrote it a temp HOME, as testkit's helpers do): ${leftInHome.join(", ")}`,
  );
}
const failed = counts.failed + (leftInHome.length > 0 ? 1 : 0);
if (seed !== undefined && failed > 0)
  console.log(`shuffled with seed ${seed}: replay this order with node scripts/run-tests.mjs ${replay}`);
console.log(`${counts.passed} passed, ${failed} failed${counts.skipped ? `, ${counts.skipped} skipped` : ""}`);
process.exit(failed > 0 ? 1 : 0);
