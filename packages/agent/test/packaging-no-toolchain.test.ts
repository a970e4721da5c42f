/**
 * The packed tarball installs and runs with no C++ toolchain, no Node headers and no prebuilt better-sqlite3 binary,
 * wherever Node has `node:sqlite` (22.13+, 24): better-sqlite3 is an optional dependency whose build may fail, and
 * the store runs on Node's own SQLite. The install runs with an empty HOME, `npm_config_nodedir` unset, a PATH that
 * holds only node, npm, sh and readlink (no python3, make or compiler), and better-sqlite3 told to build from source (so no
 * prebuilt binary is downloaded even where the network would allow it). On Node 20 there is no `node:sqlite`: the
 * install still succeeds, and the first `crow run` and `crow doctor` say what is missing and what to do, in a line
 * (no require stack). A native module missing from the installed tree (the PTY addon's package removed, as an
 * install with `--omit=optional` or on a platform without a prebuilt binary leaves it) is named the same way.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, symlink } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, REPO_ROOT, startMockLlm, textReply } from "@crow/testkit";

const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13);

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(file: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (t: string) => {
      stdout += t;
    });
    child.stderr.setEncoding("utf8").on("data", (t: string) => {
      stderr += t;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The real path of an executable on this process's PATH. */
function which(name: string): string {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    try {
      return realpathSync(path.join(dir, name));
    } catch {
      // not in this directory
    }
  }
  throw new Error(`${name} is not on PATH`);
}

describe("the packed tarball on a machine without a toolchain", { timeout: 900_000 }, () => {
  let tmp: string;
  let home: string;
  let prefix: string;
  let bin: string;
  let mock: MockLlm;
  let install: Ran;
  /** The environment of every step: the empty HOME, the bare PATH, no npm_config_nodedir, no Crow settings. */
  let env: NodeJS.ProcessEnv;

  before(async () => {
    tmp = await mkdtemp(path.join(tmpdir(), "crow-no-toolchain-"));
    home = path.join(tmp, "home");
    prefix = path.join(tmp, "prefix");
    bin = path.join(tmp, "bin");
    for (const dir of [home, bin]) await mkdir(dir);
    mock = await startMockLlm();
    // Only node, npm, sh and readlink (crow's launcher): no python3, make, cc or g++ (node-gyp builds nothing).
    await symlink(process.execPath, path.join(bin, "node"));
    for (const tool of ["npm", "sh", "readlink"]) await symlink(which(tool), path.join(bin, tool));
    const cache = (await run("npm", ["config", "get", "cache"], { cwd: tmp, env: process.env })).stdout.trim();
    env = {
      PATH: `${bin}${path.delimiter}${path.join(prefix, "bin")}`,
      HOME: home,
      // The registry's packages through the machine's npm cache (the tarball's own dependencies).
      npm_config_cache: cache,
      npm_config_build_from_source: "true",
      NO_COLOR: "1",
    };
    const packed = await run(process.execPath, ["scripts/pack.mjs", "--out", tmp], {
      cwd: REPO_ROOT,
      env: process.env,
    });
    assert.equal(packed.code, 0, packed.stderr);
    const tarball = packed.stdout.trim().split("\n").at(-1) ?? "";
    install = await run(
      "npm",
      ["install", "--global", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tarball],
      { cwd: tmp, env: { ...env, PATH: `${bin}` } },
    );
  });
  after(async () => {
    await mock?.close();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  test("npm install -g <tarball> succeeds though better-sqlite3 cannot be built", () => {
    assert.equal(install.code, 0, `${install.stdout}\n${install.stderr}`);
    assert.doesNotMatch(install.stderr, /gyp ERR!/, "an optional dependency's failed build is not the user's error");
  });

  test("Node 20 without better-sqlite3: crow run and crow doctor say what is missing and what to do", {
    skip: hasNodeSqlite && `Node ${process.versions.node} has node:sqlite (nothing to build)`,
  }, async () => {
    const cwd = path.join(tmp, "project-20");
    await mkdir(cwd);
    const user = { ...env, OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" };
    const version = process.versions.node.replace(/\./g, "\\.");
    const notInstalled =
      `Node\\.js ${version} has no built-in SQLite \\(node:sqlite, Node 22\\.13 and later\\), and better-sqlite3, the SQLite ` +
      "driver Crow uses there, is not installed: installing Crow compiles it where no prebuilt binary can be " +
      "downloaded, which needs python3, make, a C and a C\\+\\+ compiler and this Node\\.js's headers, and here ";
    // The headers: none in the empty HOME's node-gyp cache, and npm_config_nodedir unset.
    const headers =
      `this Node\\.js's headers are missing: npm_config_nodedir is unset and node-gyp's cache, ${home.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/\\.cache/node-gyp/` +
      `${version}, has none \\(node-gyp downloads them there from nodejs\\.org when it can reach it\\)`;
    const missing = `${notInstalled}python3, make, a C compiler \\(cc\\), a C\\+\\+ compiler \\(g\\+\\+\\) and ${headers}`;
    const fix =
      "se Node\\.js 22\\.13 or later \\(its built-in SQLite needs nothing compiled\\), or install python3, make, a C " +
      "compiler \\(cc\\) and a C\\+\\+ compiler \\(g\\+\\+\\) \\(Debian/Ubuntu: apt-get install python3 make gcc g\\+\\+\\) and " +
      "reinstall Crow (with npm_config_nodedir=\\S+ set|where nodejs\\.org can be reached)";
    const ran = await run(path.join(prefix, "bin", "crow"), ["run", "hello"], { cwd, env: user });
    assert.equal(ran.code, 2, ran.stderr);
    assert.match(ran.stderr, new RegExp(`^crow: ${missing}\\. U${fix}`));
    assert.doesNotMatch(ran.stderr, /Require stack|chunk-/);
    const doctor = await run(path.join(prefix, "bin", "crow"), ["doctor"], { cwd, env: user });
    assert.equal(doctor.code, 1);
    assert.match(doctor.stdout, new RegExp(`^✗ store: SQLite \\(better-sqlite3\\): ${missing}\\n {4}→ u${fix}`, "m"));
    assert.doesNotMatch(doctor.stdout, /Require stack|CROW_HOME/);

    // A toolchain on PATH, still no headers (a fresh HOME without nodejs.org): the doctor names the headers alone.
    const tools = path.join(tmp, "toolchain");
    await mkdir(tools, { recursive: true });
    for (const tool of ["python3", "make", "cc", "g++"]) await symlink(which(tool), path.join(tools, tool));
    const withTools = { ...user, PATH: `${tools}${path.delimiter}${env.PATH}` };
    const headersOnly = await run(path.join(prefix, "bin", "crow"), ["doctor"], { cwd, env: withTools });
    assert.equal(headersOnly.code, 1);
    assert.match(
      headersOnly.stdout,
      new RegExp(
        `^✗ store: SQLite \\(better-sqlite3\\): ${notInstalled}${headers}\\n {4}→ use Node\\.js 22\\.13 or later \\(its ` +
          "built-in SQLite needs nothing compiled\\), or reinstall Crow (with npm_config_nodedir=\\S+ set|where nodejs\\.org)",
        "m",
      ),
    );
    assert.doesNotMatch(headersOnly.stdout, /install python3|a C\+\+ compiler \(g/, "the toolchain is there");
  });

  test("the installed crow runs a prompt and stores the session with node:sqlite", {
    skip: !hasNodeSqlite && `Node ${process.versions.node} has no node:sqlite`,
  }, async () => {
    const cwd = path.join(tmp, "project");
    await mkdir(cwd);
    const user = { ...env, OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" };
    mock.script(textReply("Works without a compiler."));
    const ran = await run(path.join(prefix, "bin", "crow"), ["run", "hello"], { cwd, env: user });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "Works without a compiler.\n");
    assert.doesNotMatch(ran.stderr, /ExperimentalWarning/);
    const listed = await run(path.join(prefix, "bin", "crow"), ["sessions", "list"], { cwd, env: user });
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /hello/);
    const doctor = await run(path.join(prefix, "bin", "crow"), ["doctor"], { cwd, env: user });
    assert.match(doctor.stdout, /^✓ store: SQLite \(node:sqlite\) at .*crow\.db, writable$/m);
  });

  test("the PTY addon's package missing from the install: doctor names it and what to do", async () => {
    const lib = path.join(prefix, "lib", "node_modules", "crow-agent", "node_modules", "@lydell");
    await rename(lib, `${lib}.removed`);
    try {
      const user = { ...env, OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" };
      const doctor = await run(path.join(prefix, "bin", "crow"), ["doctor"], { cwd: tmp, env: user });
      assert.equal(doctor.code, 1);
      assert.match(
        doctor.stdout,
        /^✗ terminal: the PTY module @lydell\/node-pty does not load \(Cannot find package '@lydell\/node-pty'\); the terminal tool cannot start bash\n {4}→ reinstall Crow \(npm install -g crow-agent\), without --omit=optional/m,
      );
      assert.doesNotMatch(doctor.stdout, /Require stack|chunk-/);
    } finally {
      await rename(`${lib}.removed`, lib);
    }
  });
});
