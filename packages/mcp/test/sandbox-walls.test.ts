/**
 * With the network off, the host's services on unix sockets (docker, dbus, an ssh or gpg agent, a database) are out
 * of reach too: the sandbox gives the shell private, empty /run and /var/run, and covers every other bound socket
 * with /dev/null (a read-only bind would not do: connect() needs no write access). With the network on they stay
 * reachable, as the host's TCP ports are. A socket that vanishes between the listing and bwrap's mounts (another
 * program ending) does not keep the shell from starting. On real bubblewrap; the first part needs a writable /run
 * (root here and in CI).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
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
      assert.match(result.text, /UNREACHABLE ENOENT\nUNREACHABLE ENOENT\nUNREACHABLE ECONNREFUSED(\n|$)/);
    } finally {
      await mcp.close();
    }
  });

  test("network on: the same socket answers (the check above is not vacuous)", async () => {
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "workspace-write"] });
    try {
      const result = await callTool(mcp.client, "terminal", { command: `${probe(socket)}; ${probe(elsewhere)}` });
      assert.match(result.text, /GOT hello from a host service\nGOT hello from a host service(\n|$)/);
    } finally {
      await mcp.close();
    }
  });
});

describe("sandbox: a host socket removed while the sandbox is set up", () => {
  test("the shell still starts (another program's socket, listed just before, vanished before bwrap covered it)", async () => {
    const ws = await tempWorkspace("crow-sbx-vanish-");
    const other = await mkdtemp(path.join("/var/tmp", "crow-sbx-vanish-"));
    const socketDir = path.join(other, "app");
    await mkdir(socketDir);
    const server = createServer((connection) => connection.end("hello\n"));
    await new Promise<void>((resolve) => server.listen(path.join(socketDir, "app.sock"), resolve));
    // A bwrap that, the first time it is to cover that socket, lets its program remove it first: what a program
    // ending (a test's server, an editor's IPC socket) does between the listing and bwrap's mounts.
    const bwrap = path.join(other, "bwrap");
    const real = spawnSync("sh", ["-c", "command -v bwrap"], { encoding: "utf8" }).stdout.trim();
    await writeFile(
      bwrap,
      `#!/bin/sh\ncase "$*" in *${socketDir}/app.sock*) [ -e ${other}/raced ] || { touch ${other}/raced; rm -rf ${socketDir}; } ;; esac\nexec ${real} "$@"\n`,
    );
    await chmod(bwrap, 0o755);
    const mcp = await connectStdio({ cwd: ws.dir, args: ["--sandbox", "read-only"], env: { CROW_BWRAP: bwrap } });
    try {
      const result = await callTool(mcp.client, "terminal", { command: "echo started" });
      assert.equal(existsSync(path.join(other, "raced")), true, "the race was staged");
      assert.equal(result.text, "started");
    } finally {
      await mcp.close();
      server.close();
      await ws.cleanup();
      await rm(other, { recursive: true, force: true });
    }
  });
});
