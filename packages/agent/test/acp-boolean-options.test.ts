/**
 * On/off settings as session config options: `type: "boolean"` only for clients that declared
 * `session.configOptions.boolean`, an On/Off select for the others, and either form honoured when set.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

describe("crow acp: the Sandbox switch as a boolean option, or an On/Off select for clients without booleans", () => {
  const fx = useAcpFixture({ startAgent: false });

  test("a client that declared boolean options gets type boolean", async () => {
    const agent = await fx.spawn({ session: { configOptions: { boolean: {} } } });
    const { configOptions } = await agent.newSession(fx.ws.dir);
    const option = configOptions?.find((o) => o.id === "sandbox");
    assert.equal(option?.type, "boolean");
    assert.equal(option?.currentValue, true);
    await agent.close();
  });

  test("a client without them gets an On/Off select, and setting it off runs commands unconfined", async () => {
    const agent = await fx.spawn();
    const outside = await mkdtemp(path.join("/var/tmp", "crow-switch-select-"));
    try {
      const created = await agent.newSession(fx.ws.dir);
      const { sessionId } = created;
      const option = created.configOptions?.find((o) => o.id === "sandbox");
      assert.equal(option?.type, "select");
      assert.equal(option?.currentValue, "on");
      assert.deepEqual(option?.type === "select" ? option.options.map((o) => ("value" in o ? o.value : "")) : [], [
        "on",
        "off",
      ]);
      // Nothing of type boolean reaches this client, in the answers or in the updates.
      const off = await agent.agent.request(methods.agent.session.setConfigOption, {
        sessionId,
        configId: "sandbox",
        value: "off",
      });
      assert.equal(off.configOptions.find((o) => o.id === "sandbox")?.currentValue, "off");
      fx.mock.script(reply().toolCall("terminal", { command: `echo unconfined > ${outside}/a.txt` }), textReply("ok"));
      await agent.prompt(sessionId, "write outside");
      assert.equal(await readFile(path.join(outside, "a.txt"), "utf8"), "unconfined\n");

      await agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "sandbox", value: "on" });
      fx.mock.script(reply().toolCall("terminal", { command: `echo again > ${outside}/b.txt` }), textReply("ok"));
      await agent.prompt(sessionId, "write outside again");
      assert.equal(existsSync(path.join(outside, "b.txt")), false);
      fx.mock.assertDone();

      await assert.rejects(
        agent.agent.request(methods.agent.session.setConfigOption, { sessionId, configId: "sandbox", value: "maybe" }),
        /Sandbox option is true or false \(or "on" \/ "off"\)/,
      );
      const wire = agent.stdoutLines.filter((line) => line.includes('"sandbox"'));
      assert.ok(wire.length > 0);
      for (const line of wire) assert.ok(!line.includes('"type":"boolean"'), line);
    } finally {
      await rm(outside, { recursive: true, force: true });
      await agent.close();
    }
  });
});
