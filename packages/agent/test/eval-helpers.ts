/**
 * Helpers of the `crow eval` tests: suites written on the fly in Harbor's task format, and the built `crow eval`
 * as a subprocess against the mock LLM with a private CROW_HOME (its SQLite store, or a given db_uri).
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { CROW_BIN } from "@crow/testkit";
import { runEnv } from "./run-helpers.js";

/** Writes `content` (path relative to `dir` → text) under `dir`, making folders as needed. */
export async function files(dir: string, content: Record<string, string>): Promise<void> {
  for (const [file, text] of Object.entries(content)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), text);
  }
}

/** A Harbor `tests/test.sh` writing reward 1 when the shell condition `check` holds, else 0. */
export const REWARD_IF = (check: string) =>
  `#!/bin/bash\nif ${check}; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n`;

/** The trial line of `crow eval run --json` output (`T` is the part of it a test reads). */
export function trialOf<T = { details?: Record<string, unknown> }>(stdout: string): T {
  const line = stdout.split("\n").find((l) => l.includes('"type":"trial"'));
  assert.ok(line, stdout);
  return JSON.parse(line) as T;
}

export interface TaskSpec {
  /** Shell lines of tests/test.sh after `cd "$EVAL_APP_DIR"` (write the reward yourself, or use `check`). */
  verifier?: string;
  /** A shell condition: reward 1 when it holds, else 0. */
  check?: string;
  environment?: Record<string, string>;
  solution?: string;
  agentTimeoutSec?: number;
  instruction?: string;
  /** Extra files under tests/. */
  tests?: Record<string, string>;
}

/** Writes a suite of tasks (by name) under `dir`; returns `dir`. */
export function writeSuite(dir: string, tasks: Record<string, TaskSpec>): string {
  for (const [name, spec] of Object.entries(tasks)) {
    const task = path.join(dir, name);
    mkdirSync(path.join(task, "tests"), { recursive: true });
    writeFileSync(path.join(task, "instruction.md"), spec.instruction ?? `Solve ${name}.\n`);
    const agent = spec.agentTimeoutSec !== undefined ? `\n[agent]\ntimeout_sec = ${spec.agentTimeoutSec}\n` : "";
    writeFileSync(
      path.join(task, "task.toml"),
      `version = "1.0"\n\n[metadata]\nname = "${name}"\n\n[verifier]\ntimeout_sec = 30.0\n${agent}`,
    );
    const body =
      spec.verifier ??
      `if ${spec.check ?? "true"}; then echo 1 > "$EVAL_LOGS_DIR/verifier/reward.txt"; else echo 0 > "$EVAL_LOGS_DIR/verifier/reward.txt"; fi`;
    writeFileSync(path.join(task, "tests", "test.sh"), `#!/bin/bash\ncd "$EVAL_APP_DIR" || exit 1\n${body}\n`);
    for (const [file, text] of Object.entries(spec.tests ?? {})) writeFileSync(path.join(task, "tests", file), text);
    for (const [file, text] of Object.entries(spec.environment ?? {})) {
      mkdirSync(path.dirname(path.join(task, "environment", file)), { recursive: true });
      writeFileSync(path.join(task, "environment", file), text);
    }
    if (spec.solution) {
      mkdirSync(path.join(task, "solution"), { recursive: true });
      writeFileSync(path.join(task, "solution", "solve.sh"), `#!/bin/bash\ncd "$EVAL_APP_DIR"\n${spec.solution}\n`);
      chmodSync(path.join(task, "solution", "solve.sh"), 0o755);
    }
  }
  return dir;
}

export interface EvalResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface EvalOptions {
  mockUrl: string;
  home: string;
  env?: Record<string, string | undefined>;
  cwd?: string;
  /** Run as this user id (and group id), through setpriv; needs root. */
  uid?: number;
}

/** Starts the built `crow eval <args>`; `done` resolves when it exits. */
export function startEval(
  args: readonly string[],
  options: EvalOptions,
): { child: ChildProcess; done: Promise<EvalResult>; output: () => string } {
  const argv = [process.execPath, CROW_BIN, "eval", ...args];
  // As another user: setpriv drops root's ids (the caller makes home that user's).
  const [file, ...rest] =
    options.uid === undefined
      ? argv
      : ["setpriv", `--reuid=${options.uid}`, `--regid=${options.uid}`, "--clear-groups", ...argv];
  const child = spawn(file as string, rest, {
    env: runEnv(options.mockUrl, options.home, options.env),
    cwd: options.cwd ?? options.home,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = new Promise<EvalResult>((resolve) => {
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
  return { child, done, output: () => stdout };
}

/** Runs the built `crow eval <args>` to its end. */
export function runEval(args: readonly string[], options: EvalOptions): Promise<EvalResult> {
  return startEval(args, options).done;
}

/** The run id of a `crow eval run` (its report's title, or its JSON `start` event). */
export function runIdOf(output: string): string {
  const id = /eval-\d{8}-\d{6}-[0-9a-f]{4}/.exec(output)?.[0];
  if (!id) throw new Error(`no run id in: ${output}`);
  return id;
}
