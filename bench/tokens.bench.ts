// Request bytes of one scripted task, side by side with another agent: what a task costs in tokens before any model
// is involved. The task is the anchors' one: 10 tool rounds alternating a file read and a shell `echo`, then an
// answer, answered by one scripted mock model; every agent runs it against the same mock in the same run.
//
//   npm run bench -- tokens
//   PI_BIN=/tmp/pi/node_modules/.bin/pi npm run bench -- tokens     # with pi (npm i @mariozechner/pi-coding-agent)
//   CROW_BENCH_PROMPT=full npm run bench -- tokens                  # Crow with the fuller prompt version
//   CROW_BENCH_DUMP=/tmp/requests npm run bench -- tokens           # every request body, one file per agent
//   CROW_BENCH_BUILDS="before=/tmp/old/packages/agent/bundle/crow.js now=packages/agent/bundle/crow.js" …
//
// Printed for each agent: the first request's bytes and the whole task's, and for the first request its system
// prompt and each tool definition (JSON bytes as sent). The first request is what every request resends: its tools
// and system prompt are the static prefix a provider can cache. Then where the whole task's bytes went: that prefix
// resent with every request, the tool results, the assistant's calls, the rest (the user's prompt, the envelope).
// With PI_BIN, each Crow build is checked against pi's bytes (whole task and first request): one over pi's is said
// and makes the run exit 1 — the budget issue 49 set. `npm test` holds fixed byte budgets too (request-budget.test.ts).
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import {
  type CapturedRequest,
  CROW_BIN,
  type MockLlm,
  reply,
  startMockLlm,
  tempWorkspace,
  textReply,
} from "@crow/testkit";
import { writeReport } from "./lib.js";

/** How one agent names the two tools of the task and their arguments. */
interface Agent {
  name: string;
  read: (file: string) => [string, Record<string, unknown>];
  shell: (command: string) => [string, Record<string, unknown>];
  /** Runs the task's prompt to the end against `mock`. */
  run: (mock: MockLlm, cwd: string, home: string) => Promise<void>;
}

const ROUNDS = 10;
const PROMPT = "Look at the source files and tell me what the project does.";

/** A small TypeScript file of about 40 lines, like the files such a task reads. */
function sourceFile(index: number): string {
  const lines = [
    `// Module ${index}: part of the sample project the benchmark reads.`,
    'import { strict } from "node:assert";',
    "",
  ];
  for (let f = 0; f < 6; f++) {
    lines.push(`/** Adds ${f} to a number and checks the result is finite. */`);
    lines.push(`export function add${index}_${f}(value: number): number {`);
    lines.push(`  const result = value + ${f};`);
    lines.push("  strict.ok(Number.isFinite(result));");
    lines.push("  return result;");
    lines.push("}");
  }
  return `${lines.join("\n")}\n`;
}

function exec(file: string, args: string[], env: NodeJS.ProcessEnv, cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { env, cwd, stdio: ["pipe", "pipe", "pipe"] });
    let stderr = "";
    child.stdout.resume();
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdin.end();
    child.once("error", reject);
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`${file} exited ${code}: ${stderr.slice(-2000)}`)),
    );
  });
}

/** The environment without the caller's provider and Crow settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_") && !key.startsWith("PI_"))
      env[key] = value;
  }
  return env;
}

/** Crow from the bundle `bin` (`crow.js`), optionally with a built-in prompt version as the user's template. */
function crowAgent(name: string, bin: string): Agent {
  const version = process.env.CROW_BENCH_PROMPT;
  return {
    name: version ? `${name} (${version})` : name,
    read: (file) => ["read", { file_path: file }],
    shell: (command) => ["terminal", { command }],
    run: async (mock, cwd, home) => {
      if (version) {
        // A named prompt version as the user's template (see docs/eval.md).
        const { builtinPromptVersion } = await import("@crow/core");
        const template = builtinPromptVersion(version);
        if (!template) throw new Error(`CROW_BENCH_PROMPT=${version}: no such built-in prompt version`);
        await mkdir(path.join(home, "prompts"), { recursive: true });
        await writeFile(path.join(home, "prompts", "system_prompt.njk"), template);
      }
      const env = { ...cleanEnv(), OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model", CROW_HOME: home };
      await exec(process.execPath, [bin, "run", "--yes", PROMPT], env, cwd);
    },
  };
}

/** `CROW_BENCH_BUILDS="before=/tmp/old/packages/agent/bundle/crow.js now=packages/agent/bundle/crow.js"`, else this checkout's. */
function crowBuilds(): Agent[] {
  const spec = process.env.CROW_BENCH_BUILDS?.trim();
  if (!spec) return [crowAgent("crow", CROW_BIN)];
  return spec.split(/\s+/).map((item) => {
    const at = item.indexOf("=");
    if (at < 1) throw new Error(`CROW_BENCH_BUILDS: "${item}" is not name=path`);
    return crowAgent(item.slice(0, at), path.resolve(item.slice(at + 1)));
  });
}

function pi(bin: string): Agent {
  return {
    name: "pi",
    read: (file) => ["read", { path: file }],
    shell: (command) => ["bash", { command }],
    run: async (mock, cwd, home) => {
      const models = {
        providers: {
          mock: {
            baseUrl: mock.url,
            api: "openai-completions",
            apiKey: "mock",
            compat: { supportsDeveloperRole: false, supportsReasoningEffort: false },
            models: [{ id: "mock-model" }],
          },
        },
      };
      await writeFile(path.join(home, "models.json"), JSON.stringify(models));
      const env = { ...cleanEnv(), PI_CODING_AGENT_DIR: home, PI_OFFLINE: "1", PI_TELEMETRY: "0" };
      await exec(bin, ["--provider", "mock", "--model", "mock-model", "--no-session", "-p", PROMPT], env, cwd);
    },
  };
}

/** The task's script: rounds alternating read and `echo`, then the answer. */
function script(mock: MockLlm, agent: Agent, files: string[]): void {
  for (let round = 0; round < ROUNDS; round++) {
    const [name, args] =
      round % 2 === 0 ? agent.read(files[(round / 2) % files.length] ?? "") : agent.shell(`echo step ${round}`);
    mock.script(
      reply()
        .text(`Round ${round + 1}.`)
        .toolCall(name, args),
    );
  }
  mock.script(textReply("The project adds small numbers in five modules, each checking its results are finite."));
}

interface Measure {
  requests: number;
  firstBytes: number;
  totalBytes: number;
  systemBytes: number;
  toolsBytes: number;
  perTool: Record<string, number>;
  /** The whole task's bytes by what they carried, summed over all requests (JSON as sent). */
  task: { prefix: number; toolResults: number; assistant: number; rest: number };
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value ?? null));

function measureOf(requests: readonly CapturedRequest[]): Measure {
  const first = requests[0];
  if (!first) throw new Error("no request reached the mock");
  const system = first.body.messages.filter((m) => m.role === "system" || m.role === "developer");
  const perTool: Record<string, number> = {};
  for (const tool of first.body.tools ?? []) perTool[tool.function.name] = Buffer.byteLength(JSON.stringify(tool));
  const task = { prefix: 0, toolResults: 0, assistant: 0, rest: 0 };
  for (const { body, bytes } of requests) {
    const of = (role: string) => body.messages.filter((m) => m.role === role).reduce((sum, m) => sum + jsonBytes(m), 0);
    const prefix = jsonBytes(body.tools ?? []) + of("system") + of("developer");
    task.prefix += prefix;
    task.toolResults += of("tool");
    task.assistant += of("assistant");
    task.rest += bytes - prefix - of("tool") - of("assistant");
  }
  return {
    requests: requests.length,
    task,
    firstBytes: first.bytes,
    totalBytes: requests.reduce((sum, r) => sum + r.bytes, 0),
    systemBytes: system.reduce((sum, m) => sum + Buffer.byteLength(String(m.content ?? "")), 0),
    toolsBytes: Buffer.byteLength(JSON.stringify(first.body.tools ?? [])),
    perTool,
  };
}

const kb = (bytes: number) => `${(bytes / 1000).toFixed(1)} KB`;

export async function run(): Promise<void> {
  const agents = [...crowBuilds(), ...(process.env.PI_BIN ? [pi(path.resolve(process.env.PI_BIN))] : [])];
  const results: Record<string, Measure> = {};
  for (const agent of agents) {
    const mock = await startMockLlm();
    const ws = await tempWorkspace("crow-bench-tokens-");
    const home = await mkdtemp(path.join(tmpdir(), "crow-bench-tokens-home-"));
    try {
      const files: string[] = [];
      for (let i = 0; i < 5; i++) files.push(await ws.write(`src/module${i}.ts`, sourceFile(i)));
      script(mock, agent, files);
      await agent.run(mock, ws.dir, home);
      mock.assertDone();
      results[agent.name] = measureOf(mock.requests);
      const dump = process.env.CROW_BENCH_DUMP;
      if (dump) {
        // Every request's body, to see where the bytes go.
        await mkdir(dump, { recursive: true });
        const bodies = mock.requests.map((r) => r.body);
        await writeFile(path.join(dump, `${agent.name.replace(/\W+/g, "-")}.json`), JSON.stringify(bodies, null, 1));
      }
    } finally {
      await mock.close();
      await ws.cleanup();
      await rm(home, { recursive: true, force: true });
    }
  }
  console.log(`One task, ${ROUNDS} tool rounds (read / echo) and an answer, one scripted mock:`);
  for (const [name, m] of Object.entries(results)) {
    console.log(
      `  ${name.padEnd(12)} ${m.requests} requests, whole task ${kb(m.totalBytes)}, first request ${kb(m.firstBytes)} (system prompt ${kb(m.systemBytes)}, tools ${kb(m.toolsBytes)})`,
    );
    const tools = Object.entries(m.perTool).sort((a, b) => b[1] - a[1]);
    console.log(`  ${"".padEnd(12)} tools: ${tools.map(([t, b]) => `${t} ${kb(b)}`).join(", ")}`);
    const { prefix, toolResults, assistant, rest } = m.task;
    console.log(
      `  ${"".padEnd(12)} whole task: prefix resent ${kb(prefix)}, tool results ${kb(toolResults)}, assistant ${kb(assistant)}, rest ${kb(rest)}`,
    );
  }
  const piMeasure = results.pi;
  if (piMeasure) {
    for (const [name, m] of Object.entries(results)) {
      if (name === "pi") continue;
      const over = m.totalBytes > piMeasure.totalBytes || m.firstBytes > piMeasure.firstBytes;
      const pct = (a: number, b: number) => `${((100 * a) / b).toFixed(1)} %`;
      console.log(
        `  ${name} / pi: whole task ${pct(m.totalBytes, piMeasure.totalBytes)}, first request ${pct(m.firstBytes, piMeasure.firstBytes)}: ${over ? "OVER pi's bytes" : "within pi's bytes"}`,
      );
      if (over) process.exitCode = 1;
    }
  }
  writeReport("tokens", { rounds: ROUNDS, results });
}
