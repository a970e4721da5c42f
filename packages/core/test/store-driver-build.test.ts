/**
 * Why better-sqlite3 is not installed, as the store's error (and `crow doctor`) says it on a Node without
 * `node:sqlite`: what its build lacks on this machine, looked for as node-gyp looks — python3, make, cc and g++ on
 * PATH (or what $PYTHON, $MAKE, $CC, $CXX name), this Node's headers in npm_config_nodedir or node-gyp's cache — and
 * the fix for what is missing. Real directories and executables; no build is run.
 */
import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type BuildPlace, buildNeeds, missingDriverText } from "../src/store/driver-build.js";

const NODE = "Node.js 20.20.2 has no built-in SQLite";

describe("what better-sqlite3's build lacks here", () => {
  let dir: string;
  let tools: string;
  let bare: string;
  let home: string;
  /** A Node installed under `prefix` (bin/node, include/node with its headers), as official builds are. */
  let prefix: string;

  async function program(where: string, name: string): Promise<void> {
    await writeFile(path.join(where, name), "#!/bin/sh\n");
    await chmod(path.join(where, name), 0o755);
  }
  async function headers(where: string, major: number): Promise<void> {
    await mkdir(path.join(where, "include", "node"), { recursive: true });
    await writeFile(path.join(where, "include", "node", "node.h"), "");
    await writeFile(
      path.join(where, "include", "node", "node_version.h"),
      `#define NODE_MAJOR_VERSION ${major}\n#define NODE_MINOR_VERSION 20\n`,
    );
  }
  const place = (over: Partial<BuildPlace> & { env?: NodeJS.ProcessEnv } = {}): BuildPlace => ({
    env: { PATH: tools },
    home,
    nodeVersion: "20.20.2",
    execPath: path.join(dir, "elsewhere", "bin", "node"),
    systemPrefix: path.join(dir, "usr"),
    ...over,
  });

  before(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "crow-driver-build-"));
    tools = path.join(dir, "tools");
    bare = path.join(dir, "bare");
    home = path.join(dir, "home");
    prefix = path.join(dir, "node-20");
    for (const each of [tools, bare, home, path.join(prefix, "bin")]) await mkdir(each, { recursive: true });
    for (const name of ["python3", "make", "cc", "g++"]) await program(tools, name);
    await program(bare, "node");
    await headers(prefix, 20);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("a toolchain and no headers (a fresh HOME, nodejs.org out of reach): the headers are named, not the toolchain", () => {
    const needs = buildNeeds(place());
    assert.deepEqual(needs.missingTools, []);
    assert.match(
      needs.missingHeaders ?? "",
      /npm_config_nodedir is unset and node-gyp's cache, .*home\/\.cache\/node-gyp\/20\.20\.2, has none/,
    );
    const { problem, fix } = missingDriverText(NODE, needs);
    assert.match(problem, /and here this Node\.js's headers are missing: npm_config_nodedir is unset/);
    assert.doesNotMatch(problem, /python3 is|make is|compiler \(/);
    assert.match(fix, /^Use Node\.js 22\.13 or later .*, or reinstall Crow where nodejs\.org can be reached/);
    assert.doesNotMatch(fix, /apt-get install python3|libnode-dev/, "no Debian hint for a Node not from /usr/bin");
  });

  test("headers of this Node beside its executable, or in /usr: the fix names that npm_config_nodedir", () => {
    const needs = buildNeeds(place({ execPath: path.join(prefix, "bin", "node") }));
    assert.equal(needs.localHeaders, prefix);
    assert.match(
      missingDriverText(NODE, needs).fix,
      new RegExp(
        `or reinstall Crow with npm_config_nodedir=${prefix} set \\(this Node\\.js's headers are in ${prefix}/include/node\\)$`,
      ),
    );
  });

  test("headers of another Node major are not offered; this one's in /usr are", async () => {
    const old = path.join(dir, "node-18");
    await mkdir(path.join(old, "bin"), { recursive: true });
    await headers(old, 18);
    assert.equal(buildNeeds(place({ execPath: path.join(old, "bin", "node") })).localHeaders, undefined);
    assert.equal(
      buildNeeds(place({ execPath: path.join(old, "bin", "node"), systemPrefix: prefix })).localHeaders,
      prefix,
    );
    // Debian's own Node (/usr/bin/node, of a major no headers here match): its headers package is named.
    const debian = buildNeeds(place({ execPath: "/usr/bin/node", nodeVersion: "99.0.0" }));
    assert.equal(debian.headersPackage, "libnode-dev");
    assert.match(missingDriverText(NODE, debian).fix, /\(Debian\/Ubuntu: apt-get install libnode-dev, then \/usr\)$/);
  });

  test("headers in node-gyp's cache, or in npm_config_nodedir: none missing; a nodedir without them is named", async () => {
    await headers(path.join(home, ".cache", "node-gyp", "20.20.2"), 20);
    try {
      assert.equal(buildNeeds(place()).missingHeaders, undefined);
      const xdg = path.join(dir, "xdg");
      assert.match(
        buildNeeds(place({ env: { PATH: tools, XDG_CACHE_HOME: xdg } })).missingHeaders ?? "",
        /xdg\/node-gyp\/20\.20\.2/,
      );
    } finally {
      await rm(path.join(home, ".cache"), { recursive: true });
    }
    assert.equal(buildNeeds(place({ env: { PATH: tools, npm_config_nodedir: prefix } })).missingHeaders, undefined);
    assert.equal(
      buildNeeds(place({ env: { PATH: tools, npm_config_nodedir: bare } })).missingHeaders,
      `npm_config_nodedir=${bare} holds no include/node/node.h`,
    );
  });

  test("no toolchain: each missing program named, with the packages that bring them", () => {
    const needs = buildNeeds(place({ env: { PATH: bare }, execPath: path.join(prefix, "bin", "node") }));
    assert.deepEqual(needs.missingTools, ["python3", "make", "a C compiler (cc)", "a C++ compiler (g++)"]);
    const { problem, fix } = missingDriverText(NODE, needs);
    assert.match(
      problem,
      /here python3, make, a C compiler \(cc\), a C\+\+ compiler \(g\+\+\) and this Node\.js's headers are missing: /,
    );
    assert.match(
      fix,
      /or install python3, make, a C compiler \(cc\) and a C\+\+ compiler \(g\+\+\) \(Debian\/Ubuntu: apt-get install python3 make gcc g\+\+\) and reinstall Crow with npm_config_nodedir=/,
    );
  });

  test("$PYTHON, $MAKE, $CC and $CXX are looked for as given (CXX with its arguments: the program is the first word)", async () => {
    const env = { PATH: tools, PYTHON: "/nowhere/python3.12", CXX: "clang++ -std=c++20", CC: path.join(tools, "cc") };
    const needs = buildNeeds(place({ env }));
    assert.deepEqual(needs.missingTools, ["python3 (/nowhere/python3.12)", "a C++ compiler (clang++)"]);
    assert.deepEqual(needs.packages, [], "no package guessed for programs the user named");
  });

  test("nothing missing: the build failed for another reason, or the install left it out", async () => {
    await headers(path.join(home, ".cache", "node-gyp", "20.20.2"), 20);
    try {
      const { problem, fix } = missingDriverText(NODE, buildNeeds(place()));
      assert.match(
        problem,
        /is not installed: its build at install failed, or the install left it out \(--ignore-scripts, --omit=optional\)$/,
      );
      assert.match(fix, /reinstall Crow \(npm install -g --foreground-scripts shows the build's output\)$/);
    } finally {
      await rm(path.join(home, ".cache"), { recursive: true });
    }
  });
});
