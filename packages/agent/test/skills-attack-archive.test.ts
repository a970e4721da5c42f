// Attacks on `crow skills` through what a `.well-known` host serves: a gzip bomb (1 GiB of zeros, about 1 MB on the
// wire, digest matching; on 0a50d1c it drove memory past 2 GB and crashed with an uncaught "Invalid string length")
// and an oversized index. Each is refused with a clear error, exit 1, nothing installed. The bomb is built here from
// gzip members concatenated (what gunzip reads as one stream), never held whole in memory.
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import { gzipSync } from "node:zlib";
import { type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { crowSkills } from "./skills-helpers.js";

let ws: TempWorkspace;
let server: Server;
let base: string;
const routes = new Map<string, Buffer>();

before(async () => {
  ws = await tempWorkspace("crow-skills-attack-archive-");
  server = createServer((req, res) => {
    const body = routes.get(req.url ?? "");
    if (body) res.writeHead(200, { "content-type": "application/octet-stream" }).end(body);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await ws.cleanup();
});

/** A ustar header of one regular file `name` claiming `size` bytes. */
function tarHeader(name: string, size: number): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 100);
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write("        ", 148);
  header.write("0", 156);
  header.write("ustar\0", 257);
  header.write("00", 263);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

async function fresh(name: string) {
  const home = ws.path(`${name}/home`);
  await mkdir(home, { recursive: true });
  return { cwd: ws.dir, home, crowHome: ws.path(`${name}/crow`) };
}

function index(prefix: string, entries: { name: string; type: string; body: Buffer }[]): string {
  const skills = entries.map((e) => {
    routes.set(`${prefix}/${e.name}.bin`, e.body);
    return {
      name: e.name,
      type: e.type,
      url: `${prefix}/${e.name}.bin`,
      digest: `sha256:${createHash("sha256").update(e.body).digest("hex")}`,
    };
  });
  routes.set(`${prefix}/.well-known/agent-skills/index.json`, Buffer.from(JSON.stringify({ skills })));
  return `${base}${prefix}/.well-known/agent-skills/index.json`;
}

test("a 1 GiB gzip bomb in a .well-known archive is refused with a clear error, nothing installed", async () => {
  const gib = 1024 * 1024 * 1024;
  const zeros = gzipSync(Buffer.alloc(1024 * 1024), { level: 9 });
  const members = [gzipSync(tarHeader("bomb/SKILL.md", gib)), ...Array.from({ length: 1024 }, () => zeros)];
  const bomb = Buffer.concat(members);
  assert.ok(bomb.length < 4 * 1024 * 1024, `the bomb is ${bomb.length} bytes on the wire`);
  const dirs = await fresh("bomb");
  const run = await crowSkills(["add", index("/bomb", [{ name: "bomb", type: "archive", body: bomb }])], dirs);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /skill bomb: .*unpacks to more than \d+ MiB.*refused, nothing installed/);
  assert.doesNotMatch(run.stderr, /Invalid string length|RangeError|at .*\.js:\d+/);
  assert.equal(existsSync(`${dirs.home}/.agents`), false);
});

test("an index or a skill larger than the download cap is refused while it downloads", async () => {
  const big = Buffer.alloc(20 * 1024 * 1024, "a");
  const dirs = await fresh("big");
  const run = await crowSkills(["add", index("/big", [{ name: "huge", type: "skill-md", body: big }])], dirs);
  assert.equal(run.code, 1, run.stderr);
  assert.match(run.stderr, /skill huge from .* is larger than \d+ MiB: refused, nothing installed/);
  assert.equal(existsSync(`${dirs.home}/.agents`), false);
});
