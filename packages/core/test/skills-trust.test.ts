import assert from "node:assert/strict";
import { mkdir, readFile, stat, symlink, writeFile } from "node:fs/promises";
import { describe, test } from "node:test";
import { isProjectTrusted, trustProject, untrustProject } from "@crow/core";
import { projectRoot, trustedProjects, trustStorePath } from "@crow/core/internal";
import { tempWorkspace } from "@crow/testkit";

async function setup() {
  const ws = await tempWorkspace("crow-trust-");
  const home = ws.path("crow-home");
  return { ws, home, options: { home } };
}

describe("trust store", () => {
  test("the store lives in the Crow home, from the option, CROW_HOME or ~/.crow", () => {
    assert.equal(trustStorePath("/h"), "/h/trusted-projects.json");
    assert.equal(trustStorePath(undefined, { CROW_HOME: "/ch" }), "/ch/trusted-projects.json");
    assert.equal(trustStorePath(undefined, { HOME: "/u" }), "/u/.crow/trusted-projects.json");
  });

  test("a project is untrusted until trusted, trusted at its git top level, and untrusted again", async () => {
    const { ws, options } = await setup();
    try {
      await mkdir(ws.path("repo/.git"), { recursive: true });
      await mkdir(ws.path("repo/src/deep"), { recursive: true });
      assert.equal(await isProjectTrusted(ws.path("repo"), options), false);
      assert.deepEqual(await trustedProjects(options), []);

      // Trusting a subfolder trusts the repository: the root returned is the git top level.
      assert.equal(await trustProject(ws.path("repo/src"), options), ws.path("repo"));
      assert.equal(await isProjectTrusted(ws.path("repo"), options), true);
      assert.equal(await isProjectTrusted(ws.path("repo/src/deep"), options), true);
      assert.deepEqual(await trustedProjects(options), [ws.path("repo")]);

      const file = trustStorePath(options.home);
      const saved = JSON.parse(await readFile(file, "utf8"));
      assert.equal(saved.version, 1);
      assert.match(saved.projects[ws.path("repo")].trusted_at, /^\d{4}-\d\d-\d\dT/);
      assert.equal((await stat(file)).mode & 0o777, 0o600, "the store is readable by the user only");

      // Trusting again keeps the first date.
      await trustProject(ws.path("repo"), options);
      assert.deepEqual(JSON.parse(await readFile(file, "utf8")), saved);

      assert.equal(await untrustProject(ws.path("repo/src/deep"), options), true);
      assert.equal(await untrustProject(ws.path("repo"), options), false);
      assert.equal(await isProjectTrusted(ws.path("repo"), options), false);
    } finally {
      await ws.cleanup();
    }
  });

  test("a repository nested in a trusted one is not trusted; a folder outside git is its own root", async () => {
    const { ws, options } = await setup();
    try {
      await mkdir(ws.path("outer/.git"), { recursive: true });
      await mkdir(ws.path("outer/vendor/inner/.git"), { recursive: true });
      await mkdir(ws.path("plain/sub"), { recursive: true });
      await trustProject(ws.path("outer"), options);
      assert.equal(await isProjectTrusted(ws.path("outer/vendor"), options), true);
      assert.equal(await isProjectTrusted(ws.path("outer/vendor/inner"), options), false);

      assert.equal(await projectRoot(ws.path("plain/sub")), ws.path("plain/sub"));
      await trustProject(ws.path("plain"), options);
      assert.equal(await isProjectTrusted(ws.path("plain"), options), true);
      // Without git there is no repository to widen trust to: a subfolder is its own root.
      assert.equal(await isProjectTrusted(ws.path("plain/sub"), options), false);
    } finally {
      await ws.cleanup();
    }
  });

  test("a symlink is judged by where it points", async () => {
    const { ws, options } = await setup();
    try {
      await mkdir(ws.path("trusted/.git"), { recursive: true });
      await mkdir(ws.path("other/.git"), { recursive: true });
      await trustProject(ws.path("trusted"), options);
      // A link inside the trusted repository pointing at another repository does not carry the trust over.
      await symlink(ws.path("other"), ws.path("trusted/link"));
      assert.equal(await projectRoot(ws.path("trusted/link")), ws.path("other"));
      assert.equal(await isProjectTrusted(ws.path("trusted/link"), options), false);
      // A link to the trusted repository is the trusted repository.
      await symlink(ws.path("trusted"), ws.path("alias"));
      assert.equal(await isProjectTrusted(ws.path("alias"), options), true);
    } finally {
      await ws.cleanup();
    }
  });

  test("a missing folder is untrusted and cannot be trusted", async () => {
    const { ws, options } = await setup();
    try {
      assert.equal(await isProjectTrusted(ws.path("nope"), options), false);
      await assert.rejects(trustProject(ws.path("nope"), options), /ENOENT/);
    } finally {
      await ws.cleanup();
    }
  });

  test("a damaged store trusts nothing and is never overwritten", async () => {
    const { ws, home, options } = await setup();
    try {
      await mkdir(ws.path("repo/.git"), { recursive: true });
      await mkdir(home, { recursive: true });
      const file = trustStorePath(home);
      await writeFile(file, `{"version":1,"projects":{"${ws.path("repo")}":`);
      assert.equal(await isProjectTrusted(ws.path("repo"), options), false);
      await assert.rejects(trustProject(ws.path("repo"), options), (error: Error) => {
        assert.match(error.message, /trust store .*trusted-projects\.json is damaged/);
        assert.match(error.message, /fix or delete it/);
        return true;
      });
      await assert.rejects(trustedProjects(options), /damaged/);
      assert.equal(await readFile(file, "utf8"), `{"version":1,"projects":{"${ws.path("repo")}":`);
    } finally {
      await ws.cleanup();
    }
  });

  test("the environment's CROW_HOME is used when no home is given", async () => {
    const { ws, home } = await setup();
    try {
      await mkdir(ws.path("repo"), { recursive: true });
      const env = { CROW_HOME: home };
      await trustProject(ws.path("repo"), { env });
      assert.equal(await isProjectTrusted(ws.path("repo"), { home }), true);
      assert.ok(await stat(ws.path("crow-home/trusted-projects.json")));
    } finally {
      await ws.cleanup();
    }
  });
});
