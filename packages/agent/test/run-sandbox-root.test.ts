/**
 * The sandbox as root (CI, containers), end to end: a scripted attacker model drives `crow run`'s terminal to
 * remount / read-write and write outside the workspace, unmount the binds over `.git` and Crow's `.env` and plant a
 * hook or print the key, in code and read-only mode. bwrap run by root keeps every capability inside unless Crow drops
 * them; each attack succeeded before it did. `crow doctor` says the sandbox was checked as root. Real bubblewrap.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import {
  CROW_BIN,
  type MockLlm,
  reply,
  startMockLlm,
  type TempWorkspace,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { runCrow, runEnv, runProcess } from "./run-helpers.js";

const SECRET = "sk-crow-run-root-secret";

describe("crow run as root: the sandboxed terminal cannot undo the sandbox", {
  timeout: 120_000,
  skip: process.getuid?.() !== 0 ? "the root case needs root" : false,
}, () => {
  let mock: MockLlm;
  let ws: TempWorkspace;
  let home: string;
  let outside: string;
  let env: Record<string, string>;

  before(async () => {
    mock = await startMockLlm();
    ws = await tempWorkspace("crow-run-root-");
    await ws.write("README.md", "hello\n");
    execFileSync("git", ["init", "-q"], { cwd: ws.dir });
    // Outside /tmp (the sandbox's private /tmp would hide these instead of protecting them).
    home = await mkdtemp(path.join("/var/tmp", "crow-run-root-home-"));
    outside = await mkdtemp(path.join("/var/tmp", "crow-run-root-out-"));
    await writeFile(path.join(home, ".env"), `OPENAI_API_KEY=${SECRET}\n`, { mode: 0o600 });
    env = runEnv(mock.url, home);
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
    await rm(home, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  });

  /** What the model got back from its one terminal call, checked to hold no key; the run's stderr. */
  async function attack(command: string, mode: "code" | "read-only"): Promise<string> {
    let result = "";
    mock.script(
      reply().toolCall("terminal", { command }),
      textReply("tried").expect((req) => {
        result = String(req.body.messages.at(-1)?.content);
      }),
    );
    const run = await runCrow(["go", "--mode", mode], { env, cwd: ws.dir });
    assert.equal(run.code, 0, run.stderr);
    mock.assertDone();
    assert.match(result, /attack over/);
    assert.doesNotMatch(result, new RegExp(SECRET));
    return result;
  }

  test("code mode: remount and write outside, unmount .git and plant a hook, unmount .env and print it", async () => {
    const result = await attack(
      [
        "mount -o remount,bind,rw / 2>&1",
        `echo pwned > ${outside}/remounted.txt`,
        "umount -l .git 2>&1",
        "mkdir -p .git/hooks; echo 'touch /var/tmp/hook-ran' > .git/hooks/pre-commit",
        `umount -l ${home}/.env 2>&1`,
        `cat ${home}/.env`,
        "echo attack over",
      ].join("; "),
      "code",
    );
    assert.equal(existsSync(path.join(outside, "remounted.txt")), false, result);
    assert.equal(existsSync(ws.path(".git/hooks/pre-commit")), false, result);
    assert.equal(await readFile(path.join(home, ".env"), "utf8"), `OPENAI_API_KEY=${SECRET}\n`);
  });

  test("read-only mode: remount, then write outside and in the workspace", async () => {
    const result = await attack(
      ["mount -o remount,bind,rw / 2>&1", `echo x > ${outside}/ro.txt`, "echo x > ro.txt", "echo attack over"].join(
        "; ",
      ),
      "read-only",
    );
    assert.equal(existsSync(path.join(outside, "ro.txt")), false, result);
    assert.equal(existsSync(ws.path("ro.txt")), false, result);
  });

  test("crow doctor says the sandbox confines commands and was checked as root", async () => {
    const run = await runProcess(process.execPath, [CROW_BIN, "doctor"], { env });
    assert.match(
      run.stdout,
      /^✓ sandbox: \/\S+\/bwrap confines commands \(sandbox: auto; run as root: every capability is dropped inside, checked at start \(a remount of \/ is refused\)\)$/m,
    );
  });
});
