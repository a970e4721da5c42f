/**
 * With the network off, the host's services on unix sockets under /run (docker, dbus, an ssh or gpg agent) are out
 * of reach too: the sandbox gives the shell private, empty /run and /var/run (a read-only bind would not do:
 * connect() needs no write access). With the network on they stay reachable, as the host's TCP ports are. On real
 * bubblewrap; needs a writable /run (root here and in CI).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type TempWorkspace, tempWorkspace } from "@crow/testkit";

describe("sandbox: host unix sockets under /run", {
  skip: process.getuid?.() !== 0 ? "needs root for /run" : false,
}, () => {
  let ws: TempWorkspace;
  let dir: string;
  let socket: string;
  let server: Server;

  before(async () => {
    ws = await tempWorkspace("crow-sbx-walls-");
    dir = await mkdtemp(path.join("/run", "crow-sbx-walls-"));
    socket = path.join(dir, "service.sock");
    server = createServer((connection) => connection.end("hello from a host service\n"));
    await new Promise<void>((resolve) => server.listen(socket, resolve));
  });
  after(async () => {
    server.close();
    await ws.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  // Through /var/run too: usually a link to /run, else a directory of its own (private as well).
  const probe = (at: string) =>
    `node -e "require('net').connect('${at}').on('data', (d) => process.stdout.write('GOT ' + d)).on('error', (e) => console.log('UNREACHABLE ' + e.code))"`;

  test("network off: the shell cannot connect to a socket under /run or /var/run", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"] });
    try {
      const result = await callTool(mcp.client, "terminal", {
        command: `${probe(socket)}; ${probe(socket.replace(/^\/run\//, "/var/run/"))}; ls /run | wc -l`,
      });
      assert.doesNotMatch(result.text, /hello from a host service/);
      assert.match(result.text, /UNREACHABLE ENOENT\nUNREACHABLE ENOENT\n/);
    } finally {
      await mcp.close();
    }
  });

  test("network on: the same socket answers (the check above is not vacuous)", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const result = await callTool(mcp.client, "terminal", { command: probe(socket) });
      assert.match(result.text, /GOT hello from a host service/);
    } finally {
      await mcp.close();
    }
  });
});
