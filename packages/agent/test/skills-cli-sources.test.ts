// `crow skills add` from the other sources, all on this machine: an `npm pack` tarball behind a loopback registry
// stand-in, an Agent Plugins directory, a marketplace listing two plugins, a `.well-known/agent-skills` index on
// loopback; and the guards: wrong digests and integrity refused, invalid skills refused with path and field, skills
// that run code gated on --yes, links never copied.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync, symlinkSync } from "node:fs";
import { chmod, mkdir, rm } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills, folderDigest, readJson, skillMd, tarArchive } from "./skills-helpers.js";

let ws: TempWorkspace;
let server: Server;
let base: string;
/** What the loopback server answers, by path. */
const routes = new Map<string, { type: string; body: Buffer }>();

before(async () => {
  ws = await tempWorkspace("crow-skills-src-");
  await mkdir(ws.path("cwd"));
  server = createServer((req, res) => {
    const route = routes.get(req.url ?? "");
    if (!route) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": route.type }).end(route.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await ws.cleanup();
});

/** A fresh HOME and CROW_HOME; the cwd is outside any git repository, so installs go to ~/.agents/skills. */
async function fresh(name: string) {
  const home = ws.path(`${name}/home`);
  await mkdir(home, { recursive: true });
  const dirs = { cwd: ws.path("cwd"), home, crowHome: ws.path(`${name}/crow`) };
  return {
    ...dirs,
    skills: path.join(home, ".agents", "skills"),
    lock: path.join(home, ".agents", "skills-lock.json"),
  };
}

test("npm: a packed tarball from a loopback registry is installed after its dist.integrity is checked", async () => {
  await ws.write("pkg/package.json", JSON.stringify({ name: "crow-test-skills", version: "1.2.0" }));
  await ws.write("pkg/skills/lint-fix/SKILL.md", skillMd("lint-fix", "Fix lint errors in TypeScript."));
  const packed = execFileSync("npm", ["pack", "--ignore-scripts", "--pack-destination", ws.dir, "--json"], {
    cwd: ws.path("pkg"),
    encoding: "utf8",
    env: { ...process.env, npm_config_cache: ws.path("npm-cache") },
  });
  const filename = (JSON.parse(packed) as { filename: string }[])[0]?.filename ?? "";
  const tarball = readFileSync(path.join(ws.dir, filename));
  const integrity = `sha512-${createHash("sha512").update(tarball).digest("base64")}`;
  const packument = (good: boolean) => ({
    name: "crow-test-skills",
    "dist-tags": { latest: "1.2.0" },
    versions: {
      "1.2.0": {
        dist: { tarball: `${base}/tarballs/skills.tgz`, integrity: good ? integrity : `sha512-${"A".repeat(86)}==` },
      },
    },
  });
  routes.set("/tarballs/skills.tgz", { type: "application/octet-stream", body: tarball });

  routes.set("/crow-test-skills", { type: "application/json", body: Buffer.from(JSON.stringify(packument(false))) });
  const bad = await fresh("npm-bad");
  const env = { npm_config_registry: `${base}/` };
  const refused = await crowSkills(["add", "npm:crow-test-skills"], { ...bad, env });
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /does not match the registry's dist\.integrity/);
  assert.equal(existsSync(bad.skills), false);

  routes.set("/crow-test-skills", { type: "application/json", body: Buffer.from(JSON.stringify(packument(true))) });
  const dirs = await fresh("npm");
  const run = await crowSkills(["add", "npm:crow-test-skills@latest"], { ...dirs, env });
  assert.equal(run.code, 0, run.stderr);
  const installed = path.join(dirs.skills, "lint-fix");
  assert.match(readFileSync(path.join(installed, "SKILL.md"), "utf8"), /Fix lint errors/);
  const entry = (readJson(dirs.lock) as { skills: Record<string, Record<string, string>> }).skills["lint-fix"];
  assert.equal(entry?.source, "npm:crow-test-skills");
  assert.equal(entry?.sourceType, "npm");
  assert.equal(entry?.resolved, "1.2.0");
  assert.equal(entry?.computedHash, folderDigest(installed));
});

test("an Agent Plugins directory: its skills installed, its mcp.json reported and not installed", async () => {
  await ws.write("plugin/plugin.json", JSON.stringify({ name: "reviewer", version: "1.0.0" }));
  await ws.write("plugin/mcp.json", JSON.stringify({ mcpServers: { x: { command: "x" } } }));
  await ws.write("plugin/skills/code-review/SKILL.md", skillMd("code-review", "Review a diff for bugs."));
  const dirs = await fresh("plugin");
  const run = await crowSkills(["add", ws.path("plugin")], dirs);
  assert.equal(run.code, 0, run.stderr);
  assert.match(run.stderr, /plugin reviewer ships MCP servers \(mcp\.json\): not installed/);
  assert.deepEqual(readdirSync(dirs.skills), ["code-review"]);
  assert.equal(existsSync(path.join(dirs.skills, "code-review", "mcp.json")), false);
});

test("a marketplace listing two plugins: --all installs both plugins' skills; find --source ranks them first", async () => {
  await ws.write(
    "market/.claude-plugin/marketplace.json",
    JSON.stringify({
      name: "team",
      owner: { name: "Team" },
      plugins: [
        { name: "docs", source: "./plugins/docs" },
        { name: "db", source: "./plugins/db" },
      ],
    }),
  );
  await ws.write("market/plugins/docs/.claude-plugin/plugin.json", JSON.stringify({ name: "docs" }));
  await ws.write("market/plugins/docs/skills/api-docs/SKILL.md", skillMd("api-docs", "Write API reference docs."));
  await ws.write("market/plugins/db/.claude-plugin/plugin.json", JSON.stringify({ name: "db" }));
  await ws.write(
    "market/plugins/db/skills/sql-migrations/SKILL.md",
    skillMd("sql-migrations", "Write safe SQL migrations."),
  );
  const dirs = await fresh("market");
  const find = await crowSkills(["find", "sql migration", "--source", ws.path("market")], dirs);
  assert.equal(find.code, 0, find.stderr);
  assert.match(find.stdout, /^sql-migrations /);
  assert.equal(existsSync(dirs.skills), false);
  const run = await crowSkills(["add", ws.path("market"), "--all"], dirs);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(readdirSync(dirs.skills).sort(), ["api-docs", "sql-migrations"]);
  const lock = readJson(dirs.lock) as { skills: Record<string, { skillPath: string }> };
  assert.equal(lock.skills["sql-migrations"]?.skillPath, "plugins/db/skills/sql-migrations/SKILL.md");
});

test(".well-known index on loopback: installed when digests match; one wrong digest refuses it all, nothing written", async () => {
  const good = Buffer.from(skillMd("changelog", "Keep a changelog."));
  const other = Buffer.from(skillMd("commit-msg", "Write commit messages."));
  const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;
  routes.set("/skills/changelog.md", { type: "text/markdown", body: good });
  routes.set("/skills/commit-msg.md", { type: "text/markdown", body: other });
  const index = (wrong: boolean) => ({
    skills: [
      {
        name: "changelog",
        type: "skill-md",
        description: "Keep a changelog.",
        url: "/skills/changelog.md",
        digest: sha(good),
      },
      {
        name: "commit-msg",
        type: "skill-md",
        description: "Commit messages.",
        url: "../../skills/commit-msg.md",
        digest: wrong ? sha(good) : sha(other),
      },
    ],
  });
  routes.set("/.well-known/agent-skills/index.json", {
    type: "application/json",
    body: Buffer.from(JSON.stringify(index(true))),
  });
  const bad = await fresh("wk-bad");
  const refused = await crowSkills(["add", `${base}/.well-known/agent-skills/index.json`, "--all"], bad);
  assert.equal(refused.code, 1);
  assert.match(
    refused.stderr,
    /skill commit-msg .* has sha256 [0-9a-f]{64}, but the index says [0-9a-f]{64}: refused, nothing installed/,
  );
  assert.equal(existsSync(bad.skills), false);

  routes.set("/.well-known/agent-skills/index.json", {
    type: "application/json",
    body: Buffer.from(JSON.stringify(index(false))),
  });
  const dirs = await fresh("wk");
  const run = await crowSkills(["add", `${base}/.well-known/agent-skills`, "--skill", "changelog"], dirs);
  assert.equal(run.code, 0, run.stderr);
  assert.deepEqual(readdirSync(dirs.skills), ["changelog"]);
  assert.deepEqual(readFileSync(path.join(dirs.skills, "changelog", "SKILL.md")), good);
  // A bare host is tried as a .well-known host first.
  const host = await fresh("wk-host");
  const bare = await crowSkills(["add", base, "--skill", "changelog"], host);
  assert.equal(bare.code, 0, bare.stderr);
  assert.deepEqual(readdirSync(host.skills), ["changelog"]);
});

test("off-spec but safe: installed under its normalised name with notices; no description: reported, not installed", async () => {
  const file = await ws.write(
    "invalid/pdf-tools/SKILL.md",
    skillMd("pdf_tools", "d", "metadata:\n  version: 2\ncompatibility: \n"),
  );
  const broken = await ws.write("invalid/no-description/SKILL.md", "---\nname: no-description\n---\nBody.\n");
  const dirs = await fresh("invalid");
  const run = await crowSkills(["add", ws.path("invalid"), "--all"], dirs);
  assert.equal(run.code, 0, run.stderr);
  assert.ok(
    run.stderr.includes(`notice: ${file}: installed as pdf-tools: its name "pdf_tools" breaks a rule`),
    run.stderr,
  );
  assert.ok(run.stderr.includes(`notice: ${file}: metadata.version: must be a string, not a number`), run.stderr);
  assert.ok(run.stderr.includes(`not installed: ${broken}: description: missing`), run.stderr);
  assert.match(run.stderr, /installed 1 of 2/);
  assert.deepEqual(readdirSync(dirs.skills), ["pdf-tools"]);
  // Asked for by name, the one that cannot be installed is a failure (exit 1).
  const named = await crowSkills(
    ["add", ws.path("invalid"), "--skill", "no-description"],
    await fresh("invalid-named"),
  );
  assert.equal(named.code, 1, named.stderr);
  assert.match(named.stderr, /nothing installed/);
});

test("skills that ship scripts or ask for allowed-tools need --yes without a terminal (exit 2); links are never copied", async () => {
  await ws.write("runs/deploy/SKILL.md", skillMd("deploy", "Deploy the app."));
  const script = await ws.write("runs/deploy/scripts/deploy.sh", "#!/bin/sh\necho deploy\n");
  await chmod(script, 0o755);
  symlinkSync("/etc/passwd", ws.path("runs/deploy/passwd"));
  const dirs = await fresh("runs");
  const refused = await crowSkills(["add", ws.path("runs/deploy")], dirs);
  assert.equal(refused.code, 2);
  assert.match(
    refused.stderr,
    /skill deploy can run code: ships a scripts\/ folder; executable files: scripts\/deploy\.sh/,
  );
  assert.match(refused.stderr, /pass --yes/);
  assert.equal(existsSync(dirs.skills), false);

  await ws.write("tools/git-helper/SKILL.md", skillMd("git-helper", "Git chores.", "allowed-tools: Bash(git:*)\n"));
  const tools = await crowSkills(["add", ws.path("tools/git-helper")], dirs);
  assert.equal(tools.code, 2);
  assert.match(tools.stderr, /asks for allowed-tools: Bash\(git:\*\)/);

  const run = await crowSkills(["add", ws.path("runs/deploy"), "--yes"], dirs);
  assert.equal(run.code, 0, run.stderr);
  const installed = path.join(dirs.skills, "deploy");
  assert.equal(existsSync(path.join(installed, "passwd")), false);
  assert.match(run.stderr, /passwd is a link; not installed/);
  assert.equal(statSync(path.join(installed, "scripts/deploy.sh")).mode & 0o111, 0o111);
  assert.deepEqual(readdirSync(path.dirname(installed)), ["deploy"]);
  await rm(ws.path("runs/deploy/passwd"));
});

test("an archive entry that climbs out with .. or is a link is not written; a marketplace plugin outside is refused", async () => {
  const escapee = `crow-escape-${process.pid}-${Date.now()}.txt`;
  const archive = tarArchive([
    { name: "archived/SKILL.md", body: skillMd("archived", "An archived skill.") },
    { name: `../../${escapee}`, body: "escaped\n" },
    { name: `archived/../../../${escapee}`, body: "escaped\n" },
    { name: "archived/hosts", link: "/etc/hosts" },
  ]);
  const digest = `sha256:${createHash("sha256").update(archive).digest("hex")}`;
  routes.set("/archive/archived.tar.gz", { type: "application/gzip", body: archive });
  routes.set("/archive/.well-known/agent-skills/index.json", {
    type: "application/json",
    body: Buffer.from(
      JSON.stringify({ skills: [{ name: "archived", type: "archive", url: "/archive/archived.tar.gz", digest }] }),
    ),
  });
  const dirs = await fresh("archive");
  const run = await crowSkills(["add", `${base}/archive/.well-known/agent-skills/index.json`], dirs);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(existsSync(path.join(tmpdir(), escapee)), false);
  assert.deepEqual(readdirSync(path.join(dirs.skills, "archived")), ["SKILL.md"]);

  await ws.write(
    "outside/marketplace.json",
    JSON.stringify({ name: "m", owner: { name: "o" }, plugins: [{ name: "p", source: "../plugin" }] }),
  );
  const outside = await crowSkills(["add", ws.path("outside"), "--all"], await fresh("outside"));
  assert.equal(outside.code, 1);
  assert.match(outside.stderr, /plugin p's source \.\.\/plugin points outside the marketplace/);
});
