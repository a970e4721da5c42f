/**
 * With the network off, the host's services on unix sockets (docker, dbus, an ssh or gpg agent, a database) are out
 * of reach too: the sandbox gives the shell private, empty /run and /var/run, and covers every other bound socket
 * with /dev/null (a read-only bind would not do: connect() needs no write access). With the network on they stay
 * reachable, as the host's TCP ports are. On real bubblewrap; needs a writable /run (root here and in CI).
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type TempWorkspace, tempWorkspace } from "@crow/testkit";

describe("sandbox: host unix sockets", {
  skip: process.getuid?.() !== 0 ? "needs root for /run" : false,
}, () => {
  let ws: TempWorkspace;
  let dir: string;
  let other: string;
  let socket: string;
  let elsewhere: string;
  const servers: Server[] = [];

  before(async () => {
    ws = await tempWorkspace("crow-sbx-walls-");
    dir = await mkdtemp(path.join("/run", "crow-sbx-walls-"));
    socket = path.join(dir, "service.sock");
    // And one outside /run (a database's, or Docker Desktop's under the home directory).
    other = await mkdtemp(path.join("/var/tmp", "crow-sbx-walls-"));
    elsewhere = path.join(other, "service.sock");
    for (const at of [socket, elsewhere]) {
      const server = createServer((connection) => connection.end("hello from a host service\n"));
      await new Promise<void>((resolve) => server.listen(at, resolve));
      servers.push(server);
    }
  });
  after(async () => {
    for (const server of servers) server.close();
    await ws.cleanup();
    await rm(dir, { recursive: true, force: true });
    await rm(other, { recursive: true, force: true });
  });

  // Through /var/run too: usually a link to /run, else a directory of its own (private as well).
  const probe = (at: string) =>
    `node -e "require('net').connect('${at}').on('data', (d) => process.stdout.write('GOT ' + d)).on('error', (e) => console.log('UNREACHABLE ' + e.code))"`;

  test("network off: the shell cannot connect to a socket under /run, /var/run or elsewhere", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"] });
    try {
      const result = await callTool(mcp.client, "terminal", {
        command: `${probe(socket)}; ${probe(socket.replace(/^\/run\//, "/var/run/"))}; ${probe(elsewhere)}`,
      });
      assert.doesNotMatch(result.text, /hello from a host service/);
      assert.match(result.text, /UNREACHABLE ENOENT\nUNREACHABLE ENOENT\nUNREACHABLE ECONNREFUSED\n/);
    } finally {
      await mcp.close();
    }
  });

  test("network on: the same socket answers (the check above is not vacuous)", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const result = await callTool(mcp.client, "terminal", { command: `${probe(socket)}; ${probe(elsewhere)}` });
      assert.match(result.text, /GOT hello from a host service\nGOT hello from a host service\n/);
    } finally {
      await mcp.close();
    }
  });
});
