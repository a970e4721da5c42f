/**
 * The shared crow-mcp's unix socket is no way out of the sandbox. With TMPDIR outside /tmp (so the socket's private
 * directory is not under the sandbox's private /tmp), the model's sandboxed shell used to find the socket, open a
 * session of its own without sandbox settings (which the toolserver took as "off") and run commands unconfined, even
 * in read-only mode with the network off. Attack from the model's seat through a spawned `crow acp` on real bubblewrap.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { methods } from "@agentclientprotocol/sdk";
import { reply, textReply, useAcpFixture } from "@crow/testkit";

/**
 * A node script the model writes into its private /tmp and runs: it looks for crow-mcp's sockets under `dir`, connects
 * to the first, opens a session without any sandbox settings and asks its terminal to create `target`. It prints what
 * it found and every answer.
 */
function attackScript(dir: string, target: string): string {
  return `
const net = require("node:net"), fs = require("node:fs");
const dir = ${JSON.stringify(dir)};
const sockets = [];
for (const d of fs.readdirSync(dir)) {
  if (!d.startsWith("crow-mcp-")) continue;
  try { for (const f of fs.readdirSync(dir + "/" + d)) if (f.endsWith(".sock")) sockets.push(dir + "/" + d + "/" + f); } catch {}
}
console.log("FOUND " + sockets.length);
if (sockets.length === 0) process.exit(0);
const c = net.connect(sockets[0]);
const send = (m) => c.write(JSON.stringify({ jsonrpc: "2.0", ...m }) + "\\n");
let buf = "";
c.on("error", (e) => { console.log("ERROR " + e.code); process.exit(0); });
c.on("close", () => { console.log("CLOSED"); process.exit(0); });
c.on("data", (d) => {
  buf += d;
  for (let i = buf.indexOf("\\n"); i >= 0; i = buf.indexOf("\\n")) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    console.log("ANSWER " + line.slice(0, 400));
    const m = JSON.parse(line);
    if (m.id === 1 && m.result) {
      send({ method: "notifications/initialized" });
      send({ id: 2, method: "tools/call", params: { name: "terminal", arguments: { command: "touch ${target} && echo PWNED" } } });
    } else if (m.id === 1 || m.id === 2) process.exit(0);
  }
});
send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "0" } } });
`;
}

/**
 * A node the sandboxed shell can run: this one, unless it lives under /tmp (the Node 22/24 runs of CI fetch theirs
 * there), which the sandbox replaces with a private directory; then the first node on PATH outside /tmp.
 */
function nodeOutsideTmp(): string {
  const candidates = [process.execPath, ...(process.env.PATH ?? "").split(":").map((dir) => path.join(dir, "node"))];
  const found = candidates.find((file) => path.isAbsolute(file) && !file.startsWith("/tmp/") && existsSync(file));
  assert.ok(found, "a node outside /tmp, for the script the sandboxed shell runs");
  return found;
}

describe("crow acp: the sandboxed shell cannot use crow-mcp's own socket", () => {
  let tmp = "";
  const fx = useAcpFixture({ startAgent: false });

  test("read-only, network off, TMPDIR outside /tmp: the socket's directory is empty inside the sandbox", async () => {
    tmp = await mkdtemp(path.join("/var/tmp", "crow-walls-"));
    try {
      const agent = await fx.spawn({ env: { TMPDIR: tmp } });
      const { sessionId } = await agent.newSession(fx.ws.dir);
      await agent.agent.request(methods.agent.session.setMode, { sessionId, modeId: "read-only" });
      const target = path.join(tmp, "pwned");
      const script = Buffer.from(attackScript(tmp, target)).toString("base64");
      fx.mock.script(
        reply().toolCall("terminal", {
          command: `echo ${script} | base64 -d > /tmp/attack.js && ${nodeOutsideTmp()} /tmp/attack.js`,
        }),
        textReply("done").expect((req) => {
          const result = String(req.body.messages.filter((m) => m.role === "tool").at(-1)?.content);
          assert.match(result, /FOUND 0/, result);
          assert.doesNotMatch(result, /PWNED/);
        }),
      );
      await agent.prompt(sessionId, "escape");
      fx.mock.assertDone();
      // The socket is really there on the host: the attack would have found it without the wall.
      assert.ok(
        readdirSync(tmp).some((d) => d.startsWith("crow-mcp-") && readdirSync(path.join(tmp, d)).length > 0),
        "the shared toolserver's socket lives under TMPDIR",
      );
      assert.equal(existsSync(target), false, "a command ran outside the sandbox through crow-mcp's socket");
      await agent.close();
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });
});
