#!/usr/bin/env node
// Runs `crow eval run TASK --oracle` over every task directory of a suite (one crow process per task, so one broken
// task cannot stop the rest) and prints a per-task table: task, outcome (passed / failed / skipped-at-setup /
// error), a short reason, and the wall time. Numbers only, no assertion: it says what the oracle does on public
// Harbor tasks on this machine.
//
//   npm run build && node bench/eval-public.mjs DIR [--markdown] [--tasks GLOB,…]
//
// The task scripts get this process's PATH (and CROW_EVAL_EXPOSE): put the docs' uvx/uv shims first on PATH to stand
// in for test-time installs (docs/eval.md, "Offline test runners"). Crow's store goes to a temporary CROW_HOME.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const CROW_BIN = fileURLToPath(new URL("../packages/agent/bundle/crow.js", import.meta.url));

function usage(text) {
  process.stderr.write(`${text}\nusage: node bench/eval-public.mjs DIR [--markdown] [--tasks GLOB,…]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
const markdown = args.includes("--markdown");
const tasksAt = args.indexOf("--tasks");
const globs = tasksAt >= 0 ? (args[tasksAt + 1] ?? "").split(",").filter(Boolean) : [];
const dir = args.find((a, i) => !a.startsWith("--") && (tasksAt < 0 || i !== tasksAt + 1));
if (!dir || !existsSync(dir)) usage(`no suite directory${dir ? `: ${dir}` : ""}`);
if (!existsSync(CROW_BIN)) usage(`${CROW_BIN} is not built: run npm run build first`);

const glob = (g) =>
  new RegExp(
    `^${g
      .replace(/[.+^${}()|[\]\\]/g, "\\$&")
      .replaceAll("*", ".*")
      .replaceAll("?", ".")}$`,
  );
const isTask = (d) => existsSync(path.join(d, "instruction.md")) || existsSync(path.join(d, "task.toml"));
const suite = path.resolve(dir);
const tasks = isTask(suite)
  ? [suite]
  : readdirSync(suite, { withFileTypes: true })
      .filter((e) => e.isDirectory() && isTask(path.join(suite, e.name)))
      .map((e) => path.join(suite, e.name))
      .filter((t) => globs.length === 0 || globs.some((g) => glob(g).test(path.basename(t))))
      .sort();
if (tasks.length === 0) usage(`${suite} holds no task directories`);

/** One line of text: whitespace collapsed, cut to `n` characters. */
const short = (text, n = 110) => {
  const one = String(text ?? "")
    .replace(/\s+/g, " ")
    .trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};

/** A line of a setup's output that names a cause. */
const FIRST_CAUSE = /fatal:|error:|could not resolve|not found|no such file|permission denied|unable to/i;

/** The outcome of one task: its oracle trial's verdict, or why it did not run. */
function classify(events, stderr, code) {
  const trial = events.find((e) => e.type === "trial");
  const skipped = /crow eval: [^:\n]+: skipped: (.*)/.exec(stderr);
  if (!trial) {
    if (skipped) return { outcome: "skipped-at-setup", reason: skipped[1] };
    const said = stderr
      .split("\n")
      .filter((l) => l.trim())
      .at(-1);
    return { outcome: "error", reason: `exit ${code}: ${said ?? "no output"}` };
  }
  if (trial.passed) return { outcome: "passed", reason: `reward ${trial.reward}` };
  const error = trial.error ?? "";
  if (error.startsWith("setup:")) {
    // The first error line of the setup's output says more than its end (a failed clone, then what it broke).
    const first = (trial.details?.setupOutput ?? "").split("\n").find((l) => FIRST_CAUSE.test(l));
    return {
      outcome: "skipped-at-setup",
      reason: first ? `${first.trim()} (${error.slice(6).trim()})` : error.slice(6),
    };
  }
  if (trial.error) return { outcome: "failed", reason: error };
  return { outcome: "failed", reason: `reward ${trial.reward}: ${trial.details?.verifierOutput?.slice(-200) ?? ""}` };
}

function runOne(task, home) {
  return new Promise((resolve) => {
    const env = { ...process.env, CROW_HOME: home };
    const started = performance.now();
    const child = spawn(process.execPath, [CROW_BIN, "eval", "run", task, "--oracle", "--json"], {
      env,
      cwd: home,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr += chunk;
    });
    child.on("close", (code) => {
      const events = stdout
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => {
          try {
            return JSON.parse(l);
          } catch {
            return {};
          }
        });
      resolve({ ...classify(events, stderr, code), seconds: (performance.now() - started) / 1000 });
    });
  });
}

const home = mkdtempSync(path.join(tmpdir(), "crow-eval-public-"));
const rows = [];
try {
  for (const task of tasks) {
    const row = { task: path.basename(task), ...(await runOne(task, home)) };
    rows.push(row);
    process.stderr.write(`${row.task}: ${row.outcome} (${row.seconds.toFixed(1)} s)\n`);
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}

const counts = {};
for (const row of rows) counts[row.outcome] = (counts[row.outcome] ?? 0) + 1;
if (markdown) {
  console.log("| task | outcome | reason | time |\n| --- | --- | --- | --- |");
  for (const r of rows)
    console.log(`| ${r.task} | ${r.outcome} | ${short(r.reason).replaceAll("|", "\\|")} | ${r.seconds.toFixed(1)} s |`);
} else {
  const width = Math.max(4, ...rows.map((r) => r.task.length));
  console.log(`${"task".padEnd(width)}  ${"outcome".padEnd(16)}  ${"time".padStart(7)}  reason`);
  for (const r of rows) {
    console.log(
      `${r.task.padEnd(width)}  ${r.outcome.padEnd(16)}  ${`${r.seconds.toFixed(1)} s`.padStart(7)}  ${short(r.reason)}`,
    );
  }
}
console.log(
  `\n${rows.length} task(s): ${Object.entries(counts)
    .map(([k, v]) => `${v} ${k}`)
    .join(", ")}`,
);
