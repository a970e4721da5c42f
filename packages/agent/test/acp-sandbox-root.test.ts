/**
 * Run as root, the sandbox is called confined only when its check at start held (no capability inside, a remount of
 * / refused): through a spawned `crow acp`, a bwrap that keeps the capabilities (its `--cap-drop` ignored, which is
 * what Crow ran as root before) gives the session a notice that commands run unconfined and why, no Sandbox switch,
 * and a refused session under `sandbox: required`; the real one gives a switch that says it was checked. Root only.
 */
import assert from "node:assert/strict";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { useAcpFixture } from "@crow/testkit";

describe("crow acp as root: the sandbox is called confined only when its check held", {
  skip: process.getuid?.() !== 0 ? "bwrap keeps capabilities only when run as root" : false,
}, () => {
  const fx = useAcpFixture({ startAgent: false, agent: { session: { configOptions: { boolean: {} } } } });
  let dir: string;
  let keepsCapabilities: Record<string, string>;

  before(async () => {
    dir = await mkdtemp(path.join("/var/tmp", "crow-acp-root-"));
    const wrapper = path.join(dir, "bwrap");
    await writeFile(
      wrapper,
      '#!/bin/sh\nfor a do shift; if [ "$a" = --cap-drop ]; then skip=1; elif [ -n "$skip" ]; then skip=; else set -- "$@" "$a"; fi; done\nexec /usr/bin/bwrap "$@"\n',
    );
    await chmod(wrapper, 0o755);
    keepsCapabilities = { CROW_BWRAP: wrapper };
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test("a bwrap that keeps capabilities: a notice that commands run unconfined, and no Sandbox switch", async () => {
    const agent = await fx.spawn({ env: keepsCapabilities });
    const { sessionId, configOptions } = await agent.newSession(fx.ws.dir);
    assert.equal(
      configOptions?.find((o) => o.id === "sandbox"),
      undefined,
    );
    const notice = await agent.waitForUpdate(
      sessionId,
      (u) => u.sessionUpdate === "agent_message_chunk" && JSON.stringify(u).includes("unconfined"),
      true,
    );
    assert.match(
      JSON.stringify(notice),
      /bubblewrap starts, but its sandbox does not hold here \(capabilities kept inside: .*\): run as root, a command inside could remount/,
    );
  });

  test("sandbox: required with such a bwrap: session/new fails with the reason", async () => {
    await writeFile(path.join(fx.crowHome, "config.yaml"), "sandbox: required\n");
    try {
      const agent = await fx.spawn({ env: keepsCapabilities });
      await assert.rejects(agent.newSession(fx.ws.dir), (error: unknown) => {
        assert.match(JSON.stringify(error), /sandbox: required in config\.yaml, but .*does not hold here/);
        return true;
      });
    } finally {
      await writeFile(path.join(fx.crowHome, "config.yaml"), "");
    }
  });

  test("the real bwrap: the Sandbox switch says every capability is dropped inside, checked", async () => {
    const agent = await fx.spawn({});
    const { configOptions } = await agent.newSession(fx.ws.dir);
    const option = configOptions?.find((o) => o.id === "sandbox");
    assert.match(option?.description ?? "", /Run as root: every capability is dropped inside \(checked\)/);
  });
});
