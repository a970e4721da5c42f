import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../src/config/index.js";

let root: string;
let count = 0;

/** The environment of a fresh HOME whose ~/.crow/config.yaml is `config`. */
async function home(config: string): Promise<NodeJS.ProcessEnv> {
  const dir = path.join(root, `home${count++}`);
  await mkdir(path.join(dir, ".crow"), { recursive: true });
  await writeFile(path.join(dir, ".crow", "config.yaml"), config);
  return { HOME: dir };
}

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}

before(async () => {
  root = await mkdtemp(path.join(tmpdir(), "crow-config-sandbox-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});

describe("config: sandbox", () => {
  test("default: auto, no extra writable directories, network by mode", async () => {
    const config = loadConfig(await home(""));
    assert.deepEqual(config.sandbox, { enabled: "auto", writable: [] });
  });

  test("the short form names the availability; the mapping adds writable directories and network", async () => {
    assert.equal(loadConfig(await home("sandbox: required\n")).sandbox.enabled, "required");
    assert.equal(loadConfig(await home("sandbox: off\n")).sandbox.enabled, "off");
    const env = await home("sandbox:\n  enabled: auto\n  writable: [/opt/cache, ~/.npm]\n  network: off\n");
    assert.deepEqual(loadConfig(env).sandbox, {
      enabled: "auto",
      writable: ["/opt/cache", path.join(env.HOME ?? "", ".npm")],
      network: false,
    });
  });

  test("a domain list for network is refused (it needs a filtering proxy), not read as on", async () => {
    const env = await home("sandbox:\n  network: [example.com]\n");
    const message = configError(() => loadConfig(env));
    assert.match(message, /sandbox\.network: a list of allowed domains is not supported yet/);
  });

  test("bad values say what was expected", async () => {
    const env = await home("sandbox:\n  enabled: sometimes\n  writable: [relative/dir]\n");
    const message = configError(() => loadConfig(env));
    assert.match(message, /sandbox\.enabled: expected one of auto, required, off, got "sometimes"/);
    assert.match(message, /sandbox\.writable\[0\]: expected an absolute path \(or ~\/…\), got "relative\/dir"/);
  });
});
