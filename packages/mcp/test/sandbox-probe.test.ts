/**
 * The check whether bubblewrap can confine commands here, in both forms: the background probe (`probeSandbox`, what
 * the agent starts when it starts) and the synchronous one (`sandboxAvailability`). Both must give the same verdict,
 * with the same advice, for a missing bwrap, one that cannot create the sandbox, and the real one.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { probeSandbox, resetSandboxAvailability, sandboxAvailability } from "@crow/mcp/sandbox";

/** Runs `check` with CROW_BWRAP set to `bwrap` (unset when undefined), on a fresh cache. */
async function withBwrap<T>(bwrap: string | undefined, check: () => T | Promise<T>): Promise<T> {
  const saved = process.env.CROW_BWRAP;
  if (bwrap === undefined) delete process.env.CROW_BWRAP;
  else process.env.CROW_BWRAP = bwrap;
  resetSandboxAvailability();
  try {
    return await check();
  } finally {
    if (saved === undefined) delete process.env.CROW_BWRAP;
    else process.env.CROW_BWRAP = saved;
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
    assert.deepEqual(probed, { ok: true, bwrap: "bwrap" });
  });

  test("probes asked for at once share one run", async () => {
    await withBwrap(undefined, async () => {
      const [a, b] = await Promise.all([probeSandbox(), probeSandbox()]);
      assert.equal(a, b);
    });
  });
});
