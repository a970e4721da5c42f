/**
 * `crow eval` building a task's image without Docker, through the built binary with small Harbor-format tasks made
 * here: a Dockerfile's `RUN apt-get install` (a package made here with dpkg-deb, without network; a package of the
 * host's mirror, with network) and a RUN writing under /usr/local are built once into a layer that setup, the oracle,
 * the verifier and the agent's shell all see, and the host does not; the next run takes it from the cache; without
 * network a package the host's apt cache lacks skips the task, named; not as root, the task is skipped saying why.
 * These run as root (CI does); the not-root case runs as nobody through setpriv.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { type CapturedRequest, type MockLlm, reply, startMockLlm } from "@crow/testkit";
import { runEval, runIdOf } from "./eval-helpers.js";
import {
  aptMirrorReachable,
  hostHasPackage,
  hostMountsNaming,
  imageTask,
  packageTheHostLacks,
  probeDeb,
  probeWheel,
  systemPythonHasPip,
} from "./eval-image-helpers.js";

const asRoot = process.getuid?.() === 0;
const NOBODY = 65534;

const toolResults = (request: CapturedRequest | undefined) =>
  (request?.body.messages ?? []).filter((m) => m.role === "tool").map((m) => String(m.content));

describe("crow eval: a task's image built without Docker", { skip: asRoot ? undefined : "building needs root" }, () => {
  let mock: MockLlm;
  let base: string;
  let home: string;
  let deb: string;
  const probe = `crow-probe-${process.pid}`;
  before(async () => {
    mock = await startMockLlm();
    base = await mkdtemp("/var/tmp/crow-eval-image-");
    home = await mkdtemp(path.join(tmpdir(), "crow-eval-image-home-"));
    deb = probeDeb(base, probe);
  });
  after(async () => {
    await mock.close();
    await rm(base, { recursive: true, force: true });
    await rm(home, { recursive: true, force: true });
  });

  test("RUN apt-get install and a write under /usr/local: built once, seen by every phase, never by the host; then from the cache", async () => {
    const suite = path.join(base, "offline");
    await imageTask(path.join(suite, "deb"), {
      dockerfile: [
        "FROM python:3.13-slim-bookworm",
        "WORKDIR /app",
        `COPY ${probe}.deb /app/`,
        `RUN apt-get update && apt-get install -y ./${probe}.deb && echo built > /app/built.txt`,
        "RUN printf '#!/bin/sh\\necho tool-ran\\n' > /usr/local/bin/crow-image-tool && chmod +x /usr/local/bin/crow-image-tool && python -c 'print(6*7)' > /app/py.txt",
        "",
      ].join("\n"),
      environment: { [`${probe}.deb`]: { copy: deb } },
      solve: `cat /usr/share/${probe}/hello.txt > /app/solved.txt && crow-image-tool >> /app/solved.txt`,
      check: `grep -q probed /app/solved.txt && grep -q tool-ran /app/solved.txt && [ "$(cat /app/built.txt /app/py.txt)" = "$(printf 'built\\n42')" ] && dpkg -s ${probe} >/dev/null`,
    });
    const first = await runEval(["run", suite, "--oracle", "--trials", "2", "--json"], { mockUrl: mock.url, home });
    assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
    assert.equal(first.stdout.match(/"passed":true/g)?.length, 2, first.stdout);
    // Which FROM was approximated by what, and one build for both trials.
    assert.match(
      first.stderr,
      /deb: .*image: python:3\.13-slim-bookworm approximated by .+ \(the host's\) with a layer/,
    );
    assert.equal(first.stderr.match(/deb: image [0-9a-f]{12}: built by this run/g)?.length, 1, first.stderr);
    assert.equal(hostHasPackage(probe), false, "the host's dpkg has the package");
    assert.equal(existsSync(`/usr/share/${probe}`), false);
    assert.equal(existsSync("/usr/local/bin/crow-image-tool"), false);
    assert.deepEqual(hostMountsNaming(home), [], "a mount of the run is left in the host's mount table");

    const second = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stderr, /deb: image [0-9a-f]{12}: from the cache \(built /);
    assert.doesNotMatch(second.stderr, /built by this run/);
    const report = await runEval(["report", runIdOf(second.stdout), "--trial", "deb"], { mockUrl: mock.url, home });
    assert.match(report.stdout, /image [0-9a-f]{12}: from the cache/);
    assert.match(report.stdout, /its build's output:\n\$ RUN apt-get update/);

    // The agent's shell sees the image too.
    mock.script(
      reply().toolCall("terminal", {
        command: `cat /usr/share/${probe}/hello.txt; crow-image-tool; dpkg -s ${probe} | head -1`,
      }),
      reply().text("Done."),
    );
    const agent = await runEval(["run", suite, "--json"], { mockUrl: mock.url, home });
    assert.equal(agent.code, 0, agent.stderr);
    mock.assertDone();
    const shell = toolResults(mock.requests.at(-1))[0] ?? "";
    assert.match(shell, /^probed$/m, shell);
    assert.match(shell, /^tool-ran$/m, shell);
    assert.match(shell, new RegExp(`^Package: ${probe}$`, "m"), shell);
  });

  test("RUN apt-get update && apt-get install from the host's mirror, with network", async (t) => {
    const reachable = await aptMirrorReachable();
    // Offline the build still installs through apt, from a package of environment/: the same path, less the mirror.
    const name = reachable ? packageTheHostLacks() : probe;
    if (!reachable) t.diagnostic("the host's apt mirror is unreachable: installing a local package instead");
    const suite = path.join(base, "mirror");
    await imageTask(path.join(suite, "mirror"), {
      network: true,
      dockerfile: reachable
        ? `FROM ubuntu:24.04\nWORKDIR /app\nRUN apt-get update && apt-get install -y ${name} && rm -rf /var/lib/apt/lists/*\n`
        : `FROM ubuntu:24.04\nWORKDIR /app\nCOPY ${probe}.deb /app/\nRUN apt-get update && apt-get install -y ./${probe}.deb\n`,
      environment: reachable ? {} : { [`${probe}.deb`]: { copy: deb } },
      check: `dpkg -s ${name} >/dev/null`,
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /mirror: image [0-9a-f]{12}: (built by this run|from the cache)/);
    assert.equal(hostHasPackage(name), false, `the host's dpkg has ${name}`);
  });

  test("without network, a package the host's apt cache lacks skips the task, named", async () => {
    const name = packageTheHostLacks();
    const suite = path.join(base, "lacking");
    await imageTask(path.join(suite, "lacking"), {
      dockerfile: `FROM ubuntu:24.04\nWORKDIR /app\nRUN apt-get update && apt-get install -y ${name}\n`,
      check: "true",
    });
    await imageTask(path.join(suite, "plain"), { dockerfile: "FROM ubuntu:24.04\nWORKDIR /app\n", check: "true" });
    const result = await runEval(["run", suite, "--oracle", "--json"], { mockUrl: mock.url, home });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      new RegExp(
        `lacking: skipped: needs the image: apt package\\(s\\) not on this host: ${name}; building it failed: .*no network.*(not in the host's apt cache \\(/var/cache/apt/archives\\)|unknown to the host's apt): ${name}`,
        "s",
      ),
    );
    assert.match(result.stdout, /"task":"plain".*"passed":true/);
  });

  // pip sees no index and no wheels but those a task brings: the outcome is the same on every machine.
  const noIndex = (wheels: string) => ({ PIP_CONFIG_FILE: "/dev/null", PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels });

  test("RUN pip install of a wheel the task brings: the trial's python imports it, the host's does not", async () => {
    const suite = path.join(base, "pip");
    const wheels = path.join(base, "no-wheels");
    await mkdir(wheels, { recursive: true });
    const wheel = probeWheel(path.join(base, "wheel"));
    await imageTask(path.join(suite, "wheel"), {
      dockerfile: [
        "FROM python:3.13-slim-bookworm",
        "WORKDIR /app",
        "COPY wheels/ /app/wheels/",
        "RUN pip install --no-index --find-links /app/wheels crow-probe-wheel",
        "",
      ].join("\n"),
      environment: { [`wheels/${path.basename(wheel)}`]: { copy: wheel } },
      check: `[ "$(python -c 'import crow_probe_wheel; print(crow_probe_wheel.VALUE)')" = wheel-ok ]`,
    });
    const result = await runEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: noIndex(wheels),
    });
    if (!systemPythonHasPip()) {
      assert.match(result.stderr, /wheel: skipped: needs the image: .*building it failed: Dockerfile RUN pip install/);
      return;
    }
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    assert.match(result.stderr, /wheel: image [0-9a-f]{12}: built by this run/);
    const host = spawnSync("/usr/bin/python3", ["-c", "import crow_probe_wheel"]);
    assert.notEqual(host.status, 0, "the host's python imports the wheel");
  });

  test("a published task's pip install that no reachable index has is skipped at setup, the packages named", async () => {
    // The shape of a public Harbor task's environment/Dockerfile (github.com/Ajam214/terminal-bench2-log-report-fix
    // at cdc9d65ad499f5bc0b15d1773ca409cef0112c1e, environment/Dockerfile): a pinned python image and pytest pins,
    // with allow_internet = false in its task.toml.
    const suite = path.join(base, "published");
    const wheels = path.join(base, "no-wheels");
    await mkdir(wheels, { recursive: true });
    await imageTask(path.join(suite, "log-report"), {
      dockerfile: [
        "FROM python:3.12.7-slim@sha256:1c44018d7eb40488f29e7c6ad4991d3200507e14dca71b94fe61011815e98155",
        "RUN pip install --no-cache-dir pytest==8.4.1 pytest-json-ctrf==0.3.5",
        "WORKDIR /app",
        "COPY access.log /app/access.log",
        "",
      ].join("\n"),
      environment: { "access.log": '127.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET / HTTP/1.1" 200 1\n' },
      check: "true",
    });
    await imageTask(path.join(suite, "plain"), { dockerfile: "FROM ubuntu:24.04\nWORKDIR /app\n", check: "true" });
    const result = await runEval(["run", suite, "--oracle", "--json"], {
      mockUrl: mock.url,
      home,
      env: noIndex(wheels),
    });
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /log-report: skipped: needs the image: pip package\(s\) not in the trial's python3: pytest==8\.4\.1.*pytest-json-ctrf==0\.3\.5.*; building it failed: Dockerfile RUN pip install --no-cache-dir pytest==8\.4\.1 pytest-json-ctrf==0\.3\.5 exited with/s,
    );
    assert.doesNotMatch(result.stdout, /"task":"log-report"/, "a trial of the skipped task was run");
  });

  test("not as root, a task whose packages the host lacks is skipped, saying building needs root", async () => {
    const nobodyBase = await mkdtemp("/var/tmp/crow-eval-image-nobody-");
    try {
      const suite = path.join(nobodyBase, "suite");
      const nobodyHome = path.join(nobodyBase, "home");
      await mkdir(nobodyHome);
      await imageTask(path.join(suite, "deb"), {
        dockerfile: `FROM ubuntu:24.04\nWORKDIR /app\nCOPY ${probe}.deb /app/\nRUN apt-get install -y ./${probe}.deb\n`,
        environment: { [`${probe}.deb`]: { copy: deb } },
        check: "true",
      });
      await imageTask(path.join(suite, "plain"), { dockerfile: "FROM ubuntu:24.04\nWORKDIR /app\n", check: "true" });
      execFileSync("chown", ["-R", `${NOBODY}:${NOBODY}`, nobodyHome]);
      execFileSync("chmod", ["-R", "a+rX", nobodyBase]);
      const result = await runEval(["run", suite, "--oracle", "--json"], {
        mockUrl: mock.url,
        home: nobodyHome,
        uid: NOBODY,
      });
      assert.equal(result.code, 0, result.stderr);
      assert.match(
        result.stderr,
        new RegExp(
          `deb: skipped: needs the image: apt package\\(s\\) not on this host: \\./${probe}\\.deb \\(building it needs root \\(Crow runs as uid ${NOBODY}\\)\\)`,
        ),
      );
    } finally {
      await rm(nobodyBase, { recursive: true, force: true });
    }
  });
});
