/**
 * The published package as a user gets it: `npm run pack`'s tarball installed with the real npm into an empty global
 * prefix (registry dependencies from the npm registry, through the local npm cache), and run from there with an
 * empty HOME — never from the repository. Also `npm exec --package <tarball> -- crow acp`, the npx-style launch an
 * editor uses. A file the bundles need but the tarball lacks fails these tests: the checks start every executable,
 * and every chunk a bundle imports must be in the installed package.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type MockLlm,
  REPO_ROOT,
  reply,
  spawnAcpAgent,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { brokenLinks, docPages } from "./docs-helpers.js";

const PACKAGE = "crow-agent";

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end, with pipes; `input` goes to stdin. */
function run(
  file: string,
  args: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string } = {},
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: options.cwd, env: options.env ?? process.env, stdio: "pipe" });
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
    child.stdin.end(options.input ?? "");
  });
}

/** Throws with the command's output when it failed. */
function ok(what: string, ran: Ran): Ran {
  assert.equal(ran.code, 0, `${what} failed (exit ${ran.code}):\n${ran.stdout}\n${ran.stderr}`);
  return ran;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, "utf8")) as T;

/** npm flags of every install here: the registry through the local cache, no noise. */
const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

describe("the published package, installed from its tarball", { timeout: 1_200_000 }, () => {
  let tmp: string;
  let tarball: string;
  let prefix: string;
  let installed: string;
  /** An empty HOME for every run of the installed executables. */
  let home: string;
  let npmCache: string;
  let npxDir: string;
  let mock: MockLlm;
  let ws: TempWorkspace;
  const rootVersion = readJson<{ version: string }>(path.join(REPO_ROOT, "package.json")).version;

  /** The environment of the installed executables: the empty HOME, no Crow or OpenAI settings of the caller. */
  const userEnv = (): Record<string, string> => {
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value === undefined || key.startsWith("CROW_") || key.startsWith("OPENAI_") || key.startsWith("npm_"))
        continue;
      env[key] = value;
    }
    return {
      ...env,
      HOME: home,
      XDG_CACHE_HOME: path.join(home, ".cache"),
      OPENAI_BASE_URL: mock.url,
      CROW_MODEL: "mock-model",
      NO_COLOR: "1",
    };
  };

  before(
    async () => {
      tmp = await mkdtemp(path.join(tmpdir(), "crow-packaging-"));
      home = path.join(tmp, "home");
      prefix = path.join(tmp, "prefix");
      const empty = path.join(tmp, "empty");
      for (const dir of [home, empty]) await mkdir(dir);
      mock = await startMockLlm();
      ws = await tempWorkspace();

      const packed = ok(
        "npm run pack",
        await run(process.execPath, ["scripts/pack.mjs", "--out", tmp], { cwd: REPO_ROOT }),
      );
      tarball = packed.stdout.trim().split("\n").at(-1) ?? "";
      // npx installs into <npm cache>/_npx/<hash of the package specs>; the hash names the directory to remove after.
      npmCache =
        (await run("npm", ["config", "get", "cache"], { cwd: empty })).stdout.trim() || path.join(homedir(), ".npm");
      npxDir = path.join(npmCache, "_npx", createHash("sha512").update(tarball).digest("hex").slice(0, 16));
      // Both installs compile better-sqlite3 (no prebuilt binary can be downloaded here) with one job each: in
      // parallel they take the time of one. npm runs with the real HOME (its cache and the node headers setting).
      const [global, npx] = await Promise.all([
        run("npm", ["install", "--global", "--prefix", prefix, ...NPM_FLAGS, tarball], { cwd: empty }),
        run("npm", ["exec", "--yes", ...NPM_FLAGS, "--package", tarball, "--", "crow", "--version"], { cwd: empty }),
      ]);
      ok("npm install --global", global);
      ok("npm exec -- crow --version", npx);
      assert.equal(npx.stdout.trim(), rootVersion);
      installed = path.join(prefix, "lib", "node_modules", PACKAGE);
    },
    { timeout: 1_200_000 },
  );
  after(async () => {
    await mock?.close();
    await ws?.cleanup();
    if (tmp) await rm(tmp, { recursive: true, force: true });
    if (npxDir) await rm(npxDir, { recursive: true, force: true });
  });

  test("the tarball holds the bundles and a manifest with registry dependencies only; one version everywhere", async () => {
    const manifest = readJson<{
      name: string;
      version: string;
      bin: Record<string, string>;
      dependencies: Record<string, string>;
      devDependencies?: unknown;
      scripts?: unknown;
    }>(path.join(installed, "package.json"));
    assert.equal(manifest.name, PACKAGE);
    assert.equal(manifest.version, rootVersion);
    assert.deepEqual(Object.keys(manifest.bin).sort(), ["crow", "crow-agent", "crow-mcp"]);
    // Every bin is a JavaScript file node runs (npm's shims, on every OS, and `#!/usr/bin/env node` on POSIX).
    for (const [bin, file] of Object.entries(manifest.bin)) {
      assert.match(file, /\.js$/, `${bin}: ${file}`);
      assert.match(readFileSync(path.join(installed, file), "utf8"), /^#!\/usr\/bin\/env node\n/, `${bin}: ${file}`);
    }
    assert.equal(manifest.devDependencies, undefined);
    assert.equal(manifest.scripts, undefined, "installing must build nothing of Crow's");
    for (const [name, range] of Object.entries(manifest.dependencies)) {
      assert.match(range, /^[\^~]?\d+\.\d+\.\d+$/, `${name}@${range} must come from the registry`);
    }
    for (const dir of readJson<{ workspaces: string[] }>(path.join(REPO_ROOT, "package.json")).workspaces) {
      const version = readJson<{ version: string }>(path.join(REPO_ROOT, dir, "package.json")).version;
      assert.equal(version, rootVersion, `${dir}/package.json must carry the root version`);
    }
    // No dev dependency and nothing of the workspaces came along.
    const modules = readdirSync(path.join(installed, "node_modules"));
    for (const dev of ["typescript", "esbuild", "tsx", "@biomejs", "@crow", "@types"])
      assert.ok(!modules.includes(dev), dev);
  });

  test("the README's pages are in the package: every link between README.md and docs/*.md resolves there", () => {
    const pages = docPages(installed);
    assert.ok(pages.includes(path.join("docs", "configuration.md")), pages.join(", "));
    // Links out of the package (examples/, packaging/, AGENTS.md of the repository) are the repository's to check.
    const inside = (page: string, problem: string) => {
      const target = problem.slice(page.length + 2).split(":")[0] ?? "";
      const file = path.resolve(path.dirname(path.join(installed, page)), target.split("#")[0] ?? "");
      return file === path.join(installed, "README.md") || file.startsWith(path.join(installed, "docs") + path.sep);
    };
    assert.deepEqual(
      pages.flatMap((page) => brokenLinks(installed, page).filter((problem) => inside(page, problem))),
      [],
    );
  });

  test("every chunk a bundle imports is in the installed package", () => {
    const bundle = path.join(installed, "bundle");
    const files = readdirSync(bundle).filter((f) => f.endsWith(".js"));
    const imported = new Set<string>();
    for (const file of files) {
      const text = readFileSync(path.join(bundle, file), "utf8");
      for (const match of text.matchAll(/(?:from\s*|import\s*\(\s*|import\s*)"(\.\/[^"]+)"/g)) {
        if (match[1]) imported.add(match[1]);
      }
    }
    assert.ok(
      imported.size > 5,
      `found only ${imported.size} chunk imports: the pattern no longer matches esbuild's output`,
    );
    // The session viewer's page, served from bundle/ by `crow sessions serve`.
    for (const asset of ["./viewer.js", "./viewer.css"]) imported.add(asset);
    const missing = [...imported].filter((rel) => !existsSync(path.join(bundle, rel)));
    assert.deepEqual(missing, []);
  });

  test("every package the bundles load from node_modules when first needed resolves in the installed package", () => {
    // Loaded at run time, not bundled: yaml (config.yaml), nunjucks (a user's prompt template), ajv (output schemas),
    // better-sqlite3 and @lydell/node-pty (native addons: the store, the terminal).
    const bundle = path.join(installed, "bundle");
    const required = new Set<string>();
    for (const file of readdirSync(bundle).filter((f) => f.endsWith(".js"))) {
      const text = readFileSync(path.join(bundle, file), "utf8");
      for (const match of text.matchAll(/createRequire\d*\(import\.meta\.url\)\("([^"]+)"\)/g)) {
        if (match[1]) required.add(match[1]);
      }
      // The native addons are import()ed (a bare name: neither a chunk of the bundle nor a Node built-in).
      for (const match of text.matchAll(/import\(\s*"((?!\.|node:)[^"]+)"\s*\)/g)) {
        if (match[1]) required.add(match[1]);
      }
    }
    assert.deepEqual([...required].sort(), [
      "@lydell/node-pty",
      "ajv",
      "ajv-formats",
      "better-sqlite3",
      "nunjucks",
      "yaml",
    ]);
    const fromBundle = createRequire(path.join(bundle, "crow.js"));
    const unresolved = [...required].filter((name) => {
      try {
        fromBundle.resolve(name);
        return false;
      } catch {
        return true;
      }
    });
    assert.deepEqual(unresolved, []);
  });

  test("crow --version, crow-agent --version and crow-mcp --help work from the installed bin/", async () => {
    const version = ok(
      "crow --version",
      await run(path.join(prefix, "bin", "crow"), ["--version"], { env: userEnv() }),
    );
    assert.equal(version.stdout, `${rootVersion}\n`);
    const alias = ok(
      "crow-agent --version",
      await run(path.join(prefix, "bin", "crow-agent"), ["--version"], { env: userEnv() }),
    );
    assert.equal(alias.stdout, `${rootVersion}\n`);
    const help = ok("crow-mcp --help", await run(path.join(prefix, "bin", "crow-mcp"), ["--help"], { env: userEnv() }));
    assert.match(help.stdout, new RegExp(`^crow-mcp ${rootVersion.replaceAll(".", "\\.")} `));
    assert.match(help.stdout, /--http/);
  });

  test("crow run completes a tool task (terminal in a PTY, the session stored under the empty HOME)", async () => {
    mock.script(
      reply().toolCall("terminal", { command: "printf 'made by %s' crow > made.txt && cat made.txt" }),
      textReply("Made it.").expect((req) => {
        const result = req.body.messages.at(-1);
        assert.equal(result?.role, "tool");
        // A success is its output alone.
        assert.equal(result?.content, "made by crow");
      }),
    );
    const ran = await run(path.join(prefix, "bin", "crow"), ["run", "-c", ws.dir, "make the file"], {
      env: userEnv(),
      cwd: ws.dir,
    });
    assert.equal(ran.code, 0, ran.stderr);
    assert.equal(ran.stdout, "Made it.\n");
    assert.equal(await ws.read("made.txt"), "made by crow");
    mock.assertDone();
    assert.ok(existsSync(path.join(home, ".crow", "crow.db")), "the session is stored in ~/.crow/crow.db");
    const listed = ok(
      "crow sessions list",
      await run(path.join(prefix, "bin", "crow"), ["sessions", "list", "--json"], { env: userEnv() }),
    );
    assert.equal((JSON.parse(listed.stdout) as unknown[]).length, 1);
  });

  for (const launch of ["installed bin", "npm exec --package <tarball>"] as const) {
    test(`crow acp (${launch}) answers initialize and session/new with the built-in toolserver`, async () => {
      const command =
        launch === "installed bin"
          ? { file: path.join(prefix, "bin", "crow"), args: ["acp"] }
          : {
              file: "npm",
              // The HOME is empty, so npm is told where its cache (and the npx install in it) is.
              args: ["exec", "--yes", "--cache", npmCache, ...NPM_FLAGS, "--package", tarball, "--", "crow", "acp"],
            };
      const agent = await spawnAcpAgent({ command, env: userEnv(), llmUrl: mock.url, cwd: ws.dir });
      try {
        assert.equal(agent.initialize.agentInfo?.version, rootVersion);
        const { sessionId } = await agent.newSession(ws.dir);
        assert.ok(sessionId);
        mock.script(reply().toolCall("read", { file_path: ws.path("made.txt") }), textReply("Read it."));
        const result = await agent.prompt(sessionId, "read the file");
        assert.equal(result.stopReason, "end_turn");
        assert.ok(
          result.updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"),
          "the read went through the installed crow-mcp",
        );
        mock.assertDone();
        for (const line of agent.stdoutLines) if (line.trim()) JSON.parse(line);
      } finally {
        await agent.close();
      }
    });
  }
});
