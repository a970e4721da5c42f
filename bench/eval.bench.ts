// The `crow eval` harness itself: 100 trivial trials (10 tasks × 10 trials, each one LLM request answered at once
// by the scripted mock, then a verifier that writes reward 1) at concurrency 1, 4 and 16, through the built binary.
// Prints trials per second (from the run's first to its last JSON event, so the process start is not counted; the
// wall time with it is shown too) and the peak memory of the process tree (crow + its shared crow-mcp + shells).
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CROW_BIN, reply, startMockLlm } from "@crow/testkit";
import { writeReport } from "./lib.js";
import { peakRssMb, watchTree } from "./proc.js";

const TASKS = 10;
const TRIALS = 10;

function writeSuite(dir: string): void {
  for (let i = 0; i < TASKS; i++) {
    const task = path.join(dir, `task-${String(i).padStart(2, "0")}`);
    mkdirSync(path.join(task, "tests"), { recursive: true });
    mkdirSync(path.join(task, "environment"), { recursive: true });
    writeFileSync(path.join(task, "instruction.md"), "Say done.\n");
    writeFileSync(path.join(task, "environment", "README.md"), "A trivial task.\n");
    writeFileSync(path.join(task, "tests", "test.sh"), 'echo 1 > "$EVAL_LOGS_DIR/verifier/reward.txt"\n');
  }
}

export async function run(): Promise<void> {
  const home = await mkdtemp(path.join(tmpdir(), "crow-eval-bench-"));
  const mock = await startMockLlm();
  const suite = path.join(home, "suite");
  writeSuite(suite);
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
  }
  Object.assign(env, { CROW_HOME: home, HOME: home, OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" });
  const results: Record<string, unknown> = {};
  try {
    for (const concurrency of [1, 4, 16]) {
      for (let i = 0; i < TASKS * TRIALS; i++) mock.script(reply().text("Done.").usage(200, 5));
      const started = performance.now();
      const child = spawn(
        process.execPath,
        [CROW_BIN, "eval", "run", suite, "--trials", String(TRIALS), "--concurrency", String(concurrency), "--json"],
        { env, cwd: home, stdio: ["ignore", "pipe", "pipe"] },
      );
      const stop = watchTree(child.pid ?? 0, 20);
      let mainPeak = 0;
      const sampler = setInterval(() => {
        mainPeak = Math.max(mainPeak, peakRssMb(child.pid ?? 0));
      }, 20);
      let firstEvent = 0;
      let lastEvent = 0;
      let passed = 0;
      let buffer = "";
      child.stdout.on("data", (chunk: Buffer) => {
        buffer += chunk.toString("utf8");
        for (let nl = buffer.indexOf("\n"); nl >= 0; nl = buffer.indexOf("\n")) {
          const event = JSON.parse(buffer.slice(0, nl)) as { type: string; passed?: boolean };
          buffer = buffer.slice(nl + 1);
          if (event.type === "start") firstEvent = performance.now();
          if (event.type === "trial") {
            lastEvent = performance.now();
            if (event.passed) passed++;
          }
        }
      });
      let stderr = "";
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString("utf8");
      });
      const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
      clearInterval(sampler);
      const tree = stop();
      const wallS = (performance.now() - started) / 1000;
      if (code !== 0 || passed !== TASKS * TRIALS)
        throw new Error(`eval run failed (code ${code}, ${passed} passed): ${stderr}`);
      const trialsPerSecond = (TASKS * TRIALS) / ((lastEvent - firstEvent) / 1000);
      const row = {
        trials: TASKS * TRIALS,
        trialsPerSecond: Number(trialsPerSecond.toFixed(1)),
        wallSeconds: Number(wallS.toFixed(2)),
        peakCrowRssMb: Number(mainPeak.toFixed(1)),
        peakTreeRssMb: Number(tree.peakTreeRssMb.toFixed(1)),
        peakProcesses: tree.peakProcesses,
      };
      results[`concurrency${concurrency}`] = row;
      console.log(
        `concurrency ${String(concurrency).padStart(2)}: ${row.trialsPerSecond} trials/s (${row.trials} trials, ${row.wallSeconds} s with startup), peak RSS crow ${row.peakCrowRssMb} MB, tree ${row.peakTreeRssMb} MB (${row.peakProcesses} processes)`,
      );
    }
    mock.assertDone();
  } finally {
    await mock.close();
    await rm(home, { recursive: true, force: true });
  }
  writeReport("eval", results);
}
