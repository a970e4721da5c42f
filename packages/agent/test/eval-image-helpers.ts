/**
 * Helpers of the image tests (`crow eval` building a task's Dockerfile RUN steps into a cached layer): a small
 * Debian package made here with dpkg-deb (so a build has something to install without the network), Harbor-format
 * tasks around a Dockerfile, and what the host's mount table and package database say afterwards.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { files } from "./eval-helpers.js";

/**
 * Writes `<dir>/<name>.deb`, an architecture-independent package holding `/usr/share/<name>/hello.txt` ("probed"),
 * and returns its path.
 */
export function probeDeb(dir: string, name: string): string {
  const root = path.join(dir, `${name}-root`);
  mkdirSync(path.join(root, "DEBIAN"), { recursive: true });
  mkdirSync(path.join(root, "usr", "share", name), { recursive: true });
  writeFileSync(
    path.join(root, "DEBIAN", "control"),
    `Package: ${name}\nVersion: 1.0\nArchitecture: all\nMaintainer: Crow tests <crow@example.invalid>\nDescription: a file for Crow's image tests\n`,
  );
  writeFileSync(path.join(root, "usr", "share", name, "hello.txt"), "probed\n");
  const deb = path.join(dir, `${name}.deb`);
  execFileSync("dpkg-deb", ["--build", "--root-owner-group", root, deb], { stdio: "ignore" });
  return deb;
}

export interface ImageTask {
  dockerfile: string;
  /** `[environment] allow_internet` (default false: the build has no network). */
  network?: boolean;
  solve?: string;
  /** A shell condition: reward 1 when it holds. */
  check: string;
  /** Files of environment/ besides the Dockerfile (path → content or a host file to copy). */
  environment?: Record<string, string | { copy: string }>;
}

/** Writes one Harbor-format task at `dir`. */
export async function imageTask(dir: string, task: ImageTask): Promise<void> {
  await files(dir, {
    "instruction.md": "Use what the image installed.\n",
    "task.toml": `version = "1.0"\n[environment]\nallow_internet = ${task.network === true}\n[verifier]\ntimeout_sec = 60.0\n`,
    "environment/Dockerfile": task.dockerfile,
    "solution/solve.sh": `#!/bin/bash\n${task.solve ?? "true"}\n`,
    "tests/test.sh": `#!/bin/bash\nif ${task.check}; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n`,
  });
  for (const [file, content] of Object.entries(task.environment ?? {})) {
    const target = path.join(dir, "environment", file);
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, typeof content === "string" ? content : readFileSync(content.copy));
  }
}

const WHEEL_SCRIPT = `import base64, hashlib, sys, zipfile
name, version, out = "crow_probe_wheel", "1.0", sys.argv[1]
info = f"{name}-{version}.dist-info"
files = {
    f"{name}/__init__.py": "VALUE = 'wheel-ok'\\n",
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: crow-probe-wheel\\nVersion: {version}\\n",
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: crow-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
with zipfile.ZipFile(f"{out}/{name}-{version}-py3-none-any.whl", "w") as wheel:
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        wheel.writestr(path, text)
        record.append(f"{path},sha256={digest},{len(text.encode())}")
    record.append(f"{info}/RECORD,,")
    wheel.writestr(f"{info}/RECORD", "\\n".join(record) + "\\n")
`;

/** Writes a pure-Python wheel `crow_probe_wheel-1.0-py3-none-any.whl` (module `crow_probe_wheel`, VALUE "wheel-ok") into `dir`. */
export function probeWheel(dir: string): string {
  mkdirSync(dir, { recursive: true });
  execFileSync("python3", ["-c", WHEEL_SCRIPT, dir]);
  return path.join(dir, "crow_probe_wheel-1.0-py3-none-any.whl");
}

/** Whether the python3 trials see (the system's) has pip: a build's `pip install` needs it. */
export function systemPythonHasPip(): boolean {
  return spawnSync("/usr/bin/python3", ["-m", "pip", "--version"], { encoding: "utf8" }).status === 0;
}

/** The host's mounts (its mount table, as this test process sees it) whose line names `text`. */
export function hostMountsNaming(text: string): string[] {
  return readFileSync("/proc/self/mountinfo", "utf8")
    .split("\n")
    .filter((line) => line.includes(text));
}

/** Whether the host's dpkg has `name` installed. */
export function hostHasPackage(name: string): boolean {
  const query = spawnSync("dpkg-query", ["-W", `-f=\${Status}`, name], { encoding: "utf8" });
  return query.stdout.includes("install ok installed");
}

/** A Debian package `apt-get install` can name that the host has neither installed nor in its apt cache. */
export function packageTheHostLacks(): string {
  const cached = spawnSync("ls", ["/var/cache/apt/archives"], { encoding: "utf8" }).stdout;
  const name = ["hello", "sl", "cowsay", "figlet", "fortune-mod"].find(
    (candidate) => !hostHasPackage(candidate) && !cached.includes(`${candidate}_`),
  );
  if (!name) throw new Error("the host has every candidate package: add another");
  return name;
}

/** The first archive URI of the host's apt sources (deb822 `URIs:` or a `deb` line), if any. */
function firstAptSource(): string | undefined {
  const listed = spawnSync(
    "sh",
    ["-c", "cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources 2>/dev/null"],
    {
      encoding: "utf8",
    },
  ).stdout;
  return /^\s*(?:URIs:\s*|deb\s+(?:\[[^\]]*\]\s+)?)(https?:\/\/\S+)/m.exec(listed)?.[1];
}

/** Whether the host's apt sources answer (CI reaches Debian's or Ubuntu's mirrors; an offline machine does not). */
export async function aptMirrorReachable(): Promise<boolean> {
  const uri = firstAptSource();
  if (!uri) return false;
  try {
    const response = await fetch(uri, { method: "HEAD", signal: AbortSignal.timeout(10_000) });
    return response.status < 500;
  } catch {
    return false;
  }
}
