/**
 * The check whether bubblewrap can confine commands here, in both forms: the background probe (`probeSandbox`, what
 * the agent starts when it starts) and the synchronous one (`sandboxAvailability`). Both must give the same verdict,
 * with the same advice, for a missing bwrap, one that cannot create the sandbox, and the real one. A check that did
 * not finish (bwrap out of time, killed) is no verdict: not remembered, and crow-mcp does not take it for one.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterEach, describe, test } from "node:test";
import {
  latestSandboxAnswer,
  probeSandbox,
  resetSandboxAvailability,
  sandboxAvailability,
  useBwrapProgram,
} from "@crow/mcp/sandbox";
import { callTool, connectStdio, tempWorkspace } from "@crow/testkit";

/** Runs `check` with the bwrap program set to `bwrap` (as CROW_BWRAP sets it; default when undefined), on a fresh cache. */
async function withBwrap<T>(bwrap: string | undefined, check: () => T | Promise<T>): Promise<T> {
  useBwrapProgram(bwrap);
  resetSandboxAvailability();
  try {
    return await check();
  } finally {
    useBwrapProgram(undefined);
  }
}

describe("sandbox availability: the background probe and the synchronous check agree", () => {
  afterEach(() => resetSandboxAvailability());

  test("no bwrap installed: not available, and the reason says to install it or set sandbox: off", async () => {
    const probed = await withBwrap("/nonexistent/bwrap", () => probeSandbox());
    const checked = await withBwrap("/nonexistent/bwrap", () => sandboxAvailability());
    assert.equal(probed.ok, false);
    assert.deepEqual(probed, checked);
    assert.match(probed.ok ? "" : probed.reason, /bubblewrap \(bwrap\) is not installed.*sandbox: off/);
  });

  test("a bwrap that cannot create the sandbox: not available, with what it said", async () => {
    // `false` stands in for a bwrap refused its namespaces: it exits 1 and says nothing.
    const probed = await withBwrap("false", () => probeSandbox());
    const checked = await withBwrap("false", () => sandboxAvailability());
    assert.equal(probed.ok, false);
    assert.deepEqual(probed, checked);
    assert.match(probed.ok ? "" : probed.reason, /cannot create a sandbox here \(exit code 1\).*user namespaces/);
  });

  test("the real bwrap: available, and the synchronous check then answers from the probe's result", async () => {
    const probed = await withBwrap(undefined, async () => {
      const answer = await probeSandbox();
      // Answered from the probe: the same object, no second bwrap run.
      assert.equal(sandboxAvailability(), answer);
      return answer;
    });
    assert.equal(probed.ok, true);
    // Absolute paths, found once: every shell runs these, whatever PATH holds later.
    assert.match(probed.ok ? `${probed.bwrap} ${probed.bash}` : "", /^\/\S*\/bwrap \/\S*\/bash$/);
    assert.equal(probed.ok && probed.root, process.getuid?.() === 0);
  });

  test("probes asked for at once share one run", async () => {
    await withBwrap(undefined, async () => {
      const [a, b] = await Promise.all([probeSandbox(), probeSandbox()]);
      assert.equal(a, b);
    });
  });
});

describe("sandbox availability: a check that did not finish is no verdict", () => {
  afterEach(() => resetSandboxAvailability());

  /** A bwrap killed by SIGTERM (as the check's timeout kills it) the first `killed` times, then the real one. */
  async function killedFirst(killed: number): Promise<{ bwrap: string; dir: string }> {
    const dir = await mkdtemp(path.join("/var/tmp", "crow-probe-"));
    const bwrap = path.join(dir, "bwrap");
    const real = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
    await writeFile(
      bwrap,
      `#!/bin/sh\nn=$(cat ${dir}/n 2>/dev/null || echo 0); echo $((n + 1)) > ${dir}/n\n[ "$n" -lt ${killed} ] && kill -TERM $$\nexec ${real} "$@"\n`,
    );
    await chmod(bwrap, 0o755);
    return { bwrap, dir };
  }

  test("crow-mcp --sandbox read-only whose check at start did not finish starts, and checks again before its shell", async () => {
    const { bwrap, dir } = await killedFirst(1);
    const ws = await tempWorkspace("crow-probe-ws-");
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"], env: { CROW_BWRAP: bwrap } });
    try {
      const result = await callTool(mcp.client, "terminal", { command: "echo x > written.txt" });
      assert.match(result.text, /Read-only file system/);
      assert.equal(existsSync(ws.path("written.txt")), false);
      assert.match(mcp.stderr(), /--sandbox read-only: the sandbox check did not finish/);
    } finally {
      await mcp.close();
      await ws.cleanup();
      await rm(dir, { recursive: true, force: true });
    }
  });

  for (const [form, check] of [
    ["the background probe", probeSandbox],
    ["the synchronous check", sandboxAvailability],
  ] as const) {
    test(`${form}: undecided, saying why; not remembered, so the next check runs and decides`, async () => {
      const { bwrap, dir } = await killedFirst(1);
      try {
        await withBwrap(bwrap, async () => {
          const first = await check();
          assert.equal(first.ok, false);
          assert.equal(!first.ok && first.undecided, true);
          assert.match(
            first.ok ? "" : first.reason,
            /^the sandbox check did not finish \(bwrap did not answer within 10 s/,
          );
          assert.equal(latestSandboxAnswer(), first);
          const second = await check();
          assert.equal(second.ok, true);
          assert.equal(latestSandboxAnswer(), second);
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  }
});

describe("sandbox availability: a bwrap whose sandbox does not hold is not called confined", {
  skip: process.getuid?.() !== 0 ? "needs root: bwrap keeps capabilities only when run as root" : false,
}, () => {
  afterEach(() => resetSandboxAvailability());

  test("as root, a bwrap that keeps the capabilities (its --cap-drop ignored) is refused, saying why", async () => {
    const dir = await mkdtemp(path.join("/var/tmp", "crow-probe-"));
    const wrapper = path.join(dir, "bwrap");
    // The real bwrap without `--cap-drop ALL`: what Crow ran as root before the sandbox dropped capabilities.
    await writeFile(
      wrapper,
      '#!/bin/sh\nfor a do shift; if [ "$a" = --cap-drop ]; then skip=1; elif [ -n "$skip" ]; then skip=; else set -- "$@" "$a"; fi; done\nexec /usr/bin/bwrap "$@"\n',
    );
    await chmod(wrapper, 0o755);
    try {
      const probed = await withBwrap(wrapper, () => probeSandbox());
      const checked = await withBwrap(wrapper, () => sandboxAvailability());
      assert.deepEqual(probed, checked);
      assert.equal(probed.ok, false);
      assert.match(
        probed.ok ? "" : probed.reason,
        /^commands run unconfined: bubblewrap starts, but its sandbox does not hold here \(capabilities kept inside: .*CapEff:0*1f.*\): run as root, a command inside could remount .* Crow does not call it confined/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
