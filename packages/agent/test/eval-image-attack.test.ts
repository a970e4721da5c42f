/**
 * Attacks on `crow eval`'s image builds, from the seat of a hostile task whose Dockerfile RUN steps run as real root:
 * reading the host's secrets (in the build, the oracle, the verifier and the agent's shell; a plain trial too);
 * writing through /proc/sys and /sys; mount, remount, umount, unshare, nsenter; changing the host's /usr, /etc and
 * /var and its dpkg status through the overlay; switching users with the network on; links planted in the layer for a
 * later phase or the cleanup of a failed build to follow; killing the run mid-build (no mount, process or half-built
 * image may remain); and another local user reading the cache or having a planted entry served. Through the built
 * binary, as root (CI runs as root).
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf, startEval } from "./eval-helpers.js";
import { hostHasPackage, hostMountsNaming, imageTask, probeDeb } from "./eval-image-helpers.js";

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;
const tag = `crow-image-attack-${process.pid}`;
const SECRET = `secret-${tag}-${Math.random().toString(36).slice(2)}`;

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** Prints every secret the host hides that the script can reach, and any account line that kept its hash. */
const READ_SECRETS = [
  "cat /etc/ssl/private/*.key /etc/ssh/ssh_host_*_key /var/lib/crow-image-attack-*/secret 2>/dev/null",
  "setpriv --reuid 65534 --regid 65534 --clear-groups cat /var/lib/crow-image-attack-*/secret 2>/dev/null",
  'awk -F: \'$2 != "*" { print "HASH " FILENAME ": " $0 }\' /etc/shadow /etc/gshadow 2>/dev/null',
  "true",
].join("; ");

describe("crow eval: a hostile image build", { skip: asRoot ? undefined : "image builds need root" }, () => {
  let mock: MockLlm;
  let base: string;
  let home: string;
  let deb: string;
  const probe = `crow-probe-attack-${process.pid}`;
  const planted: string[] = [];
  /** Makes `file` on the host (and its missing directories, removed after) holding `content`, mode `mode`. */
  const plant = (file: string, content: string, mode: number, uid = 0) => {
    let dir = path.dirname(file);
    const made: string[] = [];
    while (!existsSync(dir)) {
      made.unshift(dir);
      dir = path.dirname(dir);
    }
    for (const d of made) {
      mkdirSync(d, { mode: 0o700 });
      planted.unshift(d);
    }
    writeFileSync(file, content, { mode });
    chownSync(file, uid, uid);
    planted.unshift(file);
  };
  const install = (extra: string) =>
    `FROM ubuntu:24.04\nWORKDIR /app\nCOPY ${probe}.deb /app/\nRUN apt-get install -y ./${probe}.deb\n${extra}\n`;
  before(async () => {
    mock = await startMockLlm();
    base = await mkdtemp("/var/tmp/crow-eval-image-attack-");
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-image-attack-home-"));
    deb = probeDeb(base, probe);
    plant(`/etc/ssl/private/${tag}.key`, `${SECRET}\n`, 0o600);
    plant(`/etc/ssh/ssh_host_${tag}_key`, `${SECRET}\n`, 0o600);
    // A directory of another user's, closed to others: CAP_DAC_OVERRIDE or CAP_SETUID would read it.
    plant(`/var/lib/${tag}/secret`, `${SECRET}\n`, 0o600, NOBODY);
    chownSync(`/var/lib/${tag}`, NOBODY, NOBODY);
    plant(`/usr/local/share/${tag}.txt`, "original\n", 0o644);
    plant(`/etc/${tag}.conf`, "original\n", 0o644);
    plant(`/var/lib/${tag}.state`, "original\n", 0o644);
    plant(`/etc/${tag}-victim/precious.txt`, "precious\n", 0o644);
    plant(`/var/tmp/${tag}-victim/precious.txt`, "precious\n", 0o644);
    chmodSync(`/etc/${tag}-victim`, 0o755);
  });
  after(async () => {
    await mock.close();
    for (const entry of planted) rmSync(entry, { recursive: true, force: true });
    await rm(base, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });
  const task = (suite: string, name: string, spec: Parameters<typeof imageTask>[1]) =>
    imageTask(path.join(base, suite, name), {
      ...spec,
      environment: { [`${probe}.deb`]: { copy: deb }, ...spec.environment },
    });

  test("no phase reads the host's secrets: the build, the oracle, the verifier, the agent's shell, a plain trial", async () => {
    await task("secrets", "image", {
      dockerfile: install(`RUN ${READ_SECRETS}`),
      solve: READ_SECRETS,
      check: `{ ${READ_SECRETS}; } | wc -c | grep -qx 0`,
    });
    await task("secrets", "plain", {
      dockerfile: "FROM ubuntu:24.04\nWORKDIR /app\n",
      solve: READ_SECRETS,
      check: "true",
    });
    const result = await runEval(["run", path.join(base, "secrets"), "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
    });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const runId = runIdOf(result.stdout);
    for (const name of ["image", "plain"]) {
      const report = await runEval(["report", runId, "--trial", name], { mockUrl: mock.url, home });
      assert.match(report.stdout, /passed/);
      assert.doesNotMatch(report.stdout, new RegExp(`${SECRET}|HASH /etc`), `${name}: ${report.stdout}`);
    }
    mock.script(reply().toolCall("terminal", { command: `${READ_SECRETS}; echo shell-done` }), reply().text("Done."));
    mock.script(reply().toolCall("terminal", { command: `${READ_SECRETS}; echo shell-done` }), reply().text("Done."));
    const agent = await runEval(["run", path.join(base, "secrets"), "--json"], { mockUrl: mock.url, home });
    assert.equal(agent.code, 0, agent.stderr);
    const shells = mock.requests.flatMap((request) => toolResults(request)).filter((r) => r.includes("shell-done"));
    assert.equal(shells.length, 2, JSON.stringify(shells));
    for (const shell of shells) assert.doesNotMatch(shell, new RegExp(`${SECRET}|HASH /etc`), shell);
  });

  test("a build changes nothing of the host: /proc/sys, /sys, mounts, namespaces, /usr, /etc, /var, dpkg; no user switch with network", async () => {
    const attack = [
      "#!/bin/bash",
      'try() { if "$@" >/dev/null 2>&1; then echo "ALLOWED: $*"; else echo "denied: $*"; fi; }',
      // Only the values already there are written back: harmless should a guard fail.
      'v=$(cat /proc/sys/vm/swappiness); try sh -c "echo $v > /proc/sys/vm/swappiness"',
      // core_pattern: a program the host's kernel would run as root on the next crash.
      "c=$(cat /proc/sys/kernel/core_pattern); try sh -c \"echo '$c' > /proc/sys/kernel/core_pattern\"",
      'k=$(cat /sys/kernel/mm/ksm/run 2>/dev/null) && try sh -c "echo $k > /sys/kernel/mm/ksm/run"',
      "try mount -t tmpfs none /mnt",
      "try mount -o remount,rw /",
      "try umount /usr",
      "try mount --bind / /tmp",
      "try unshare -m true",
      "try nsenter -t 1 -m true",
      `echo pwned >> /usr/local/share/${tag}.txt`,
      `echo pwned >> /etc/${tag}.conf`,
      `rm -f /var/lib/${tag}.state`,
      "printf 'Package: crow-attack\\nStatus: install ok installed\\n\\n' >> /var/lib/dpkg/status",
      "echo attack-done",
      "",
    ].join("\n");
    await task("host", "offline", {
      dockerfile: install("COPY attack.sh /app/\nRUN bash /app/attack.sh"),
      environment: { "attack.sh": attack },
      check: `grep -q pwned /usr/local/share/${tag}.txt && [ ! -e /var/lib/${tag}.state ]`,
    });
    await task("host", "online", {
      network: true,
      dockerfile: install(
        "RUN if setpriv --reuid 65534 --regid 65534 --clear-groups true; then echo ALLOWED: setuid; else echo denied: setuid; fi",
      ),
      check: "true",
    });
    // A plain trial's scripts run as root too (no capabilities, uid 0): the kernel's settings are as far for them.
    await task("host", "plain", {
      dockerfile: "FROM ubuntu:24.04\nWORKDIR /app\n",
      solve:
        'c=$(cat /proc/sys/kernel/core_pattern); (echo "$c" > /proc/sys/kernel/core_pattern) 2>/dev/null && echo ALLOWED > /app/proc.txt; true',
      check: "[ ! -e /app/proc.txt ]",
    });
    const status = sha("/var/lib/dpkg/status");
    const result = await runEval(["run", path.join(base, "host"), "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    const runId = runIdOf(result.stdout);
    const offline = (await runEval(["report", runId, "--trial", "offline"], { mockUrl: mock.url, home })).stdout;
    assert.match(offline, /attack-done/);
    assert.match(offline, /denied: mount -t tmpfs/);
    assert.doesNotMatch(offline, /ALLOWED/, offline);
    assert.match(offline, /denied: sh -c echo '.*' > \/proc\/sys\/kernel\/core_pattern/);
    assert.match(result.stdout, /"task":"plain".*"passed":true/, result.stdout);
    const online = (await runEval(["report", runId, "--trial", "online"], { mockUrl: mock.url, home })).stdout;
    assert.match(online, /denied: setuid/, online);
    assert.equal(readFileSync(`/usr/local/share/${tag}.txt`, "utf8"), "original\n");
    assert.equal(readFileSync(`/etc/${tag}.conf`, "utf8"), "original\n");
    assert.equal(readFileSync(`/var/lib/${tag}.state`, "utf8"), "original\n");
    assert.equal(sha("/var/lib/dpkg/status"), status, "the host's dpkg status changed");
    assert.equal(hostHasPackage(probe), false);
  });

  test("links planted in the layer lead nowhere: not for a later phase, not for the cleanup of a failed build", async () => {
    const links = (suffix: string) =>
      [
        `ln -s /etc/${tag}-victim /usr/local/share/link${suffix}`,
        `ln -s /var/tmp/${tag}-victim /opt/link${suffix}`,
        `ln -s /var/tmp/${tag}-victim /app/link${suffix}`,
        `mkdir -p /var/lib/d${suffix} && ln -s /var/tmp/${tag}-victim /var/lib/d${suffix}/l`,
      ].join(" && ");
    const write = [
      `for d in /usr/local/share/link1 /opt/link1 /app/link1 /var/lib/d1/l; do echo pwned > $d/precious.txt; rm -rf $d/; done 2>/dev/null`,
      "true",
    ].join("; ");
    await task("links", "served", { dockerfile: install(`RUN ${links("1")}`), solve: write, check: `{ ${write}; }` });
    await task("links", "failed", { dockerfile: install(`RUN ${links("2")} && false`), check: "true" });
    const result = await runEval(["run", path.join(base, "links"), "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.match(result.stderr, /failed: skipped: .*building it failed: Dockerfile RUN ln -s/);
    assert.match(result.stdout, /"task":"served".*"passed":true/, result.stdout);
    assert.equal(readFileSync(`/etc/${tag}-victim/precious.txt`, "utf8"), "precious\n");
    assert.equal(readFileSync(`/var/tmp/${tag}-victim/precious.txt`, "utf8"), "precious\n");
    const images = path.join(home, "cache", "images");
    assert.deepEqual(
      readdirSync(images).filter((name) => name.startsWith(".build-")),
      [],
      "a failed build was left in the cache",
    );
  });

  test("a run killed mid-build leaves no mount, no process, no half-built image; the next run builds it", async () => {
    const marker = `${tag}-sleeper`;
    await task("killed", "slow", {
      dockerfile: install(`RUN touch /app/started && bash -c 'exec -a ${marker} sleep "\${ATTACK_SLEEP:-0}"'`),
      check: "[ -f /app/started ]",
    });
    const suite = path.join(base, "killed");
    const images = path.join(home, "cache", "images");
    const started = startEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: { ATTACK_SLEEP: "300" },
    });
    const building = () =>
      existsSync(images) &&
      readdirSync(images).some(
        (name) => name.startsWith(".build-") && existsSync(path.join(images, name, "app", "started")),
      );
    for (let i = 0; i < 600 && !building(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(building(), "the build did not start");
    assert.equal(spawnSync("pgrep", ["-f", marker]).status, 0, "the sleeping step is not running");
    started.child.kill("SIGKILL");
    await started.done;
    const gone = () => spawnSync("pgrep", ["-f", marker]).status !== 0;
    for (let i = 0; i < 100 && !gone(); i++) await new Promise((resolve) => setTimeout(resolve, 100));
    assert.ok(gone(), "the build's step outlived the run");
    assert.deepEqual(hostMountsNaming(home), [], "a mount of the killed run is in the host's mount table");
    const next = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(next.code, 0, next.stderr);
    assert.match(next.stderr, /slow: image [0-9a-f]{12}: built by this run/);
    assert.deepEqual(
      readdirSync(images).filter((name) => name.startsWith(".build-")),
      [],
    );
  });

  test("another local user can neither read the cache nor get a planted image served", async () => {
    await task("shared", "probe", {
      dockerfile: install(""),
      check: `grep -qx probed /usr/share/${probe}/hello.txt`,
    });
    const suite = path.join(base, "shared");
    const built = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(built.code, 0, built.stderr);
    const images = path.join(home, "cache", "images");
    const key = /probe: image ([0-9a-f]{12})/.exec(built.stderr)?.[1] ?? "";
    const entry = readdirSync(images).find((name) => name.startsWith(key)) ?? "";
    assert.ok(key && entry, built.stderr);
    for (const dir of [images, path.join(images, entry)]) {
      const stats = statSync(dir);
      assert.equal(stats.uid, 0);
      assert.equal((stats.mode & 0o777).toString(8), "700", dir);
    }
    const asNobody = (...command: string[]) =>
      spawnSync("setpriv", [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", ...command], {
        encoding: "utf8",
      });
    assert.notEqual(asNobody("ls", images).status, 0, "nobody lists the cache");
    assert.notEqual(asNobody("cat", path.join(images, entry, "image.json")).status, 0, "nobody reads an entry");

    // Another user owns the cache's parent: they can put an images directory of theirs there, with an entry under
    // the very key, whose layer says "planted".
    const other = await mkdtemp(path.join(tmpdir(), "crow-eval-image-planted-"));
    try {
      chmodSync(other, 0o755);
      mkdirSync(path.join(other, "cache"));
      chownSync(path.join(other, "cache"), NOBODY, NOBODY);
      const fake = path.join(other, "cache", "images", entry);
      asNobody("mkdir", "-p", path.join(fake, "upper", "usr", "share", probe), path.join(fake, "app"));
      asNobody("sh", "-c", `echo planted > ${fake}/upper/usr/share/${probe}/hello.txt`);
      asNobody("sh", "-c", `echo '{"key":"${entry}","builtAt":"x","from":"x","steps":[]}' > ${fake}/image.json`);
      const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home: other });
      assert.match(
        result.stderr,
        /probe: skipped: .*image cache .* belongs to uid 65534 or is writable by other users/,
      );
      assert.doesNotMatch(result.stdout, /"passed":true/);
      // And a cache directory of root's that others may write is refused the same way.
      execFileSync("chown", ["-R", "0:0", path.join(other, "cache")]);
      chmodSync(path.join(other, "cache", "images"), 0o777);
      const open = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home: other });
      assert.match(open.stderr, /probe: skipped: .*writable by other users/);
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});
