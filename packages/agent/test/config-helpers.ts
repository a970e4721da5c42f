/** What the configuration tests (config*.test.ts) share: temp homes holding a config.yaml and .env, and errors. */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before } from "node:test";
import { ConfigError } from "../src/config/index.js";

export const FIXTURES = path.join(import.meta.dirname, "fixtures");

export interface ConfigHomes {
  /** A fresh HOME with `~/.crow` holding the given config.yaml and .env (undefined: no file). */
  crow(config?: string, dotenv?: string): Promise<{ env: NodeJS.ProcessEnv; dir: string }>;
  /** A HOME with nothing in it (never created). */
  plain(): string;
  /** The temp directory all of them are in. */
  root(): string;
}

/** Temp homes for one test file: registers the hooks that make their directory and remove it at the end. */
export function configHomes(): ConfigHomes {
  let root = "";
  let count = 0;
  before(async () => {
    root = await mkdtemp(path.join(tmpdir(), "crow-config-"));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });
  return {
    async crow(config, dotenv) {
      const fakeHome = path.join(root, `home${count++}`);
      const dir = path.join(fakeHome, ".crow");
      await mkdir(dir, { recursive: true });
      if (config !== undefined) await writeFile(path.join(dir, "config.yaml"), config);
      if (dotenv !== undefined) await writeFile(path.join(dir, ".env"), dotenv);
      return { env: { HOME: fakeHome }, dir };
    },
    plain: () => path.join(root, "plain"),
    root: () => root,
  };
}

/** The message of the ConfigError `fn` throws (fails when it throws none, or something else). */
export function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected a ConfigError, got ${String(error)}`);
    return error.message;
  }
  assert.fail("expected a ConfigError");
}
