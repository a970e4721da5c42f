/**
 * Hostile tasks against `crow eval`'s setup, from the seat of a task author (a suite the user downloaded), through
 * the built binary: a Dockerfile whose RUN plants links in /app for a later COPY to follow into the host (the user's
 * home, another directory), and a task.toml whose `env` tables name loader and shell start-up variables
 * (`LD_PRELOAD` with a real shared object built here) hoping that something on the host loads them. Nothing may be
 * written outside the trial, and no host process may load the object.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type MockLlm, startMockLlm } from "@crow/testkit";
import { runEval } from "./eval-helpers.js";

async function files(dir: string, content: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(content)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

const hasGcc = spawnSync("gcc", ["--version"]).status === 0;

const PASSING_TEST = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n";

const NOBODY = 65534;
const asRoot = process.getuid?.() === 0;

// As the user running the tests (root on CI) and, when that is root, as an ordinary user (`nobody`, through setpriv),
// whose home and directories are as much at stake.
for (const uid of [undefined, NOBODY]) {
  const who = uid === undefined ? "" : " (as nobody)";
  const skip = uid !== undefined && !asRoot ? "setpriv needs root" : undefined;

  describe(`crow eval: a hostile task's setup stays in its trial${who}`, { skip }, () => {
    let mock: MockLlm;
    let base: string;
    let home: string;
    let suites: string;
    let outside: string;
    before(async () => {
      mock = await startMockLlm();
      base = await mkdtemp("/var/tmp/crow-eval-attack-");
      // The home crow eval runs with (HOME): the real home of the user, as far as the trial can tell.
      home = path.join(base, "home");
      suites = path.join(base, "suites");
      outside = path.join(base, "outside");
      for (const dir of [home, suites, outside]) await mkdir(dir);
    });
    after(async () => {
      await mock.close();
      await rm(base, { recursive: true, force: true });
    });

    /** Everything made so far belongs to the user the run is made as (so the attack could write there). */
    const handOver = () => {
      execFileSync("chmod", ["-R", "a+rX", base]);
      if (uid !== undefined) execFileSync("chown", ["-R", `${uid}:${uid}`, home, outside]);
    };
    const options = (extra: { cwd?: string } = {}) => ({
      mockUrl: mock.url,
      home,
      ...(uid !== undefined ? { uid } : {}),
      ...extra,
    });

    test("COPY never follows a link planted in /app: not at the destination's directory, a component or the file", async () => {
      await files(home, { "victim/data.txt": "precious\n", "victim/file.txt": "precious\n" });
      await mkdir(path.join(outside, "target"));
      const suite = path.join(suites, "links");
      // Each task plants a link with RUN (inside the sandbox, where it is allowed) and then COPYs through it.
      const plants: Record<string, string> = {
        // /app/out → the home: the COPY's destination is inside it.
        "dir-link": `RUN ln -s "$HOME" /app/out\nCOPY payload /app/out/victim/data.txt\nCOPY tree/ /app/out/`,
        // A link at an intermediate component, then a new file below it.
        "component-link": `RUN mkdir -p /app/a && ln -s ${outside}/target /app/a/b\nCOPY payload /app/a/b/c/new.txt`,
        // The destination file itself is a link to a file of the home.
        "file-link": `RUN ln -s "$HOME/victim/file.txt" /app/dest.txt\nCOPY payload /app/dest.txt`,
        // A directory source copied onto a link into the home.
        "tree-link": `RUN ln -s "$HOME" /app/t\nCOPY tree /app/t`,
        // WORKDIR below a link: Docker makes the directory (here: never on the host, through the link).
        "workdir-link": `RUN ln -s "$HOME" /app/w\nWORKDIR /app/w/made-by-task\nRUN true`,
      };
      for (const [name, plant] of Object.entries(plants)) {
        await files(path.join(suite, name), {
          "instruction.md": "Nothing.\n",
          "task.toml": 'version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n',
          "environment/Dockerfile": `FROM ubuntu:24.04\nWORKDIR /app\n${plant}\n`,
          "environment/payload": "overwritten by the task\n",
          "environment/tree/planted-by-task.txt": "planted\n",
          "tests/test.sh": PASSING_TEST,
          "solution/solve.sh": "true\n",
        });
      }
      handOver();
      const result = await runEval(["run", suite, "--oracle", "--json"], options());
      assert.notEqual(result.code, null, result.stderr);
      assert.equal(readFileSync(path.join(home, "victim", "data.txt"), "utf8"), "precious\n");
      assert.equal(readFileSync(path.join(home, "victim", "file.txt"), "utf8"), "precious\n");
      assert.equal(existsSync(path.join(home, "planted-by-task.txt")), false, "a COPY wrote into the home");
      assert.equal(existsSync(path.join(home, "made-by-task")), false, "a WORKDIR was made in the home");
      assert.deepEqual(readdirSync(path.join(outside, "target")), [], "a COPY wrote through an intermediate link");
    });

    test("LD_PRELOAD and other start-up variables of task.toml never reach a host process (a real .so, absolute and relative)", {
      skip: hasGcc ? undefined : "gcc is not installed (it builds the shared object)",
    }, async () => {
      const evil = path.join(outside, "evil");
      await mkdir(evil);
      // Writes a marker named after the process that loaded it: only a host process can write there (the trial's
      // sandbox shows the host read-only).
      await writeFile(
        path.join(evil, "evil.c"),
        `#include <stdio.h>
#include <unistd.h>
#include <limits.h>
__attribute__((constructor)) static void planted(void) {
  char exe[PATH_MAX] = {0}, marker[PATH_MAX + 64];
  if (readlink("/proc/self/exe", exe, sizeof exe - 1) < 0) return;
  snprintf(marker, sizeof marker, "${evil}/loaded-by-%d", (int)getpid());
  FILE *f = fopen(marker, "w");
  if (f) { fputs(exe, f); fclose(f); }
}
`,
      );
      execFileSync("gcc", ["-shared", "-fPIC", "-o", path.join(evil, "evil.so"), path.join(evil, "evil.c")]);
      await writeFile(path.join(evil, "rc.sh"), `echo sourced > ${evil}/loaded-by-startup-file\n`);
      const suite = path.join(suites, "preload");
      const tables = {
        absolute: `[verifier.env]\nLD_PRELOAD = "${evil}/evil.so"\nBASH_ENV = "${evil}/rc.sh"\n`,
        relative: `[environment.env]\nLD_PRELOAD = "./evil.so"\nLD_LIBRARY_PATH = "."\nENV = "./rc.sh"\n[solution.env]\nLD_AUDIT = "./evil.so"\n`,
      };
      for (const [name, table] of Object.entries(tables)) {
        await files(path.join(suite, name), {
          "instruction.md": "Nothing.\n",
          "task.toml": `version = "1.0"\n[verifier]\ntimeout_sec = 60.0\n${table}`,
          "environment/Dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\nRUN echo built > built.txt\n",
          "tests/test.sh": PASSING_TEST,
          "solution/solve.sh": "true\n",
        });
      }
      // Run from the directory holding the object, so that the relative names resolve to it on the host.
      const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home, cwd: evil });
      assert.equal(result.code, 0, result.stderr);
      const markers = readdirSync(evil).filter((f) => f.startsWith("loaded-by-"));
      const loaders = markers.map((m) => `${m}: ${readFileSync(path.join(evil, m), "utf8")}`);
      assert.deepEqual(loaders, [], "a host process loaded the task's shared object or start-up file");
      assert.match(result.stdout, /"passed":true/);
    });
  });
}
