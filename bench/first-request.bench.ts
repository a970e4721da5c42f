// Start → first LLM request of `crow run "go"` (pipes, no TTY, provider from the environment), for one or more
// builds side by side, runs alternated between the builds so that the shared machine's load falls on all alike;
// with the environment as is and, when NODE_EXTRA_CA_CERTS is set, without it.
//
//   CROW_BENCH_BUILDS="old=/tmp/crow-7719/packages/agent/bundle/crow now=packages/agent/bundle/crow.js"
//   CROW_BENCH_RUNS=10 npm run bench -- first-request
//
// A build is a `crow.js` bundle (run as `node crow.js`, as npm's shim does) or any other executable (run as is: the
// launcher of a build with a start-up snapshot); `name=path/crow.js+--flag+--flag` runs the bundle with Node flags (to
// try V8 flags). Each build gets its own CROW_HOME (builds of different ages may not share a store). The CPU columns
// are the agent's (all threads, and its main thread) and its crow-mcp's when the request reached the mock: on a
// loaded machine the wall clock mostly measures the neighbours, the CPU much less. Without CROW_BENCH_BUILDS, this
// checkout's bundle alone.
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CROW_BIN, type MockLlm, startMockLlm, tempWorkspace, textReply } from "@crow/testkit";
import { formatTiming, summarize, type Timing, writeReport } from "./lib.js";
import { processTree, threadsCpuMs } from "./proc.js";

interface Build {
  name: string;
  /** A `.js` bundle or an executable. */
  bin: string;
  /** Node options for a `.js` bundle (`name=path+--flag+--flag`), to try V8 flags. */
  nodeFlags: string[];
}

function builds(): Build[] {
  const spec = process.env.CROW_BENCH_BUILDS?.trim();
  if (!spec) return [{ name: "this", bin: CROW_BIN, nodeFlags: [] }];
  return spec.split(/\s+/).map((item) => {
    const at = item.indexOf("=");
    if (at < 1) throw new Error(`CROW_BENCH_BUILDS: "${item}" is not name=path`);
    const [bin = "", ...nodeFlags] = item.slice(at + 1).split("+");
    return { name: item.slice(0, at), bin: path.resolve(bin), nodeFlags };
  });
}

/** One run: wall clock to the first request, and the CPU the agent and its crow-mcp had spent by then (ms). */
interface Sample {
  wall: number;
  /** The agent's main thread alone (JavaScript, module loading, scavenges run partly there). */
  agentMainCpu: number;
  agentCpu: number;
  toolserverCpu: number;
}

/** The CPU of the main thread of `pid` so far, ms (ns resolution). */
function mainThreadCpuMs(pid: number): number {
  try {
    return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return 0;
  }
}

/** The CPU, all threads, of the crow-mcp child of `pid` (0 when there is none yet). */
function toolserverCpuMs(pid: number): number {
  for (const child of processTree(pid).slice(1)) {
    try {
      if (readFileSync(`/proc/${child}/cmdline`, "utf8").includes("crow-mcp")) return threadsCpuMs(child);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

/** One `crow run "go"` answered by a text reply: from spawn to the first request at the mock. */
async function once(mock: MockLlm, build: Build, cwd: string, env: NodeJS.ProcessEnv, home: string): Promise<Sample> {
  mock.script(textReply("done"));
  const before = mock.requests.length;
  const [file, args] = build.bin.endsWith(".js")
    ? [process.execPath, [...build.nodeFlags, build.bin, "run", "go"]]
    : [build.bin, ["run", "go"]];
  const start = performance.now();
  const child = spawn(file, args, { env: { ...env, CROW_HOME: home }, cwd, stdio: ["pipe", "pipe", "pipe"] });
  let stderr = "";
  child.stdout.resume();
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  child.stdin.end();
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  const first = await Promise.race([
    mock.waitForRequests(before + 1).then(() => {
      const wall = performance.now() - start;
      const pid = child.pid ?? 0;
      return {
        wall,
        agentMainCpu: mainThreadCpuMs(pid),
        agentCpu: threadsCpuMs(pid),
        toolserverCpu: toolserverCpuMs(pid),
      };
    }),
    exited.then((code) => {
      throw new Error(`${build.name} exited ${code} before its first request: ${stderr}`);
    }),
  ]);
  const code = await exited;
  if (code !== 0) throw new Error(`${build.name} exited ${code}: ${stderr}`);
  return first;
}

export async function run(): Promise<void> {
  const runs = Number(process.env.CROW_BENCH_RUNS ?? 10);
  const list = builds();
  const mock = await startMockLlm();
  const ws = await tempWorkspace("crow-bench-first-");
  // A home per build: builds of different ages may not share a store (each migrates it to its own schema).
  const homes = new Map<string, string>();
  for (const build of list) homes.set(build.name, await mkdtemp(path.join(tmpdir(), "crow-bench-home-")));
  const base: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith("CROW_") && !key.startsWith("OPENAI_")) base[key] = value;
  }
  Object.assign(base, { OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" });
  const { NODE_EXTRA_CA_CERTS: extra, ...withoutCa } = base;
  const envs: Array<[string, NodeJS.ProcessEnv]> = [["as is", base]];
  if (extra) envs.push(["without NODE_EXTRA_CA_CERTS", withoutCa]);
  const report: Record<string, Record<string, unknown>> = {};
  try {
    for (const [label, env] of envs) {
      // Warm-up: the first run of a snapshot build makes its snapshot; every build's first run fills the caches.
      for (const build of list)
        for (let i = 0; i < 2; i++) await once(mock, build, ws.dir, env, homes.get(build.name) ?? "");
      const samples = new Map<string, Sample[]>(list.map((b) => [b.name, []]));
      for (let i = 0; i < runs; i++) {
        for (const build of list)
          samples.get(build.name)?.push(await once(mock, build, ws.dir, env, homes.get(build.name) ?? ""));
      }
      console.log(`crow run: start → first LLM request (${label}, ${runs} alternated runs):`);
      const first = list[0]?.name ?? "";
      const of = (name: string, pick: (s: Sample) => number): Timing => summarize((samples.get(name) ?? []).map(pick));
      const base50 = of(first, (s) => s.wall).p50;
      report[label] = {};
      for (const build of list) {
        const wall = of(build.name, (s) => s.wall);
        const agentCpu = of(build.name, (s) => s.agentCpu);
        const agentMainCpu = of(build.name, (s) => s.agentMainCpu);
        const toolserverCpu = of(build.name, (s) => s.toolserverCpu);
        report[label][build.name] = { wall, agentMainCpu, agentCpu, toolserverCpu };
        const ratio = build.name === first ? "" : `  (${(wall.p50 / base50).toFixed(2)}× ${first})`;
        console.log(`  ${build.name.padEnd(8)} ${formatTiming(wall)}${ratio}`);
        console.log(
          `  ${"".padEnd(8)} CPU by then, p50: agent ${agentCpu.p50.toFixed(0)} ms (main thread ${agentMainCpu.p50.toFixed(0)} ms), crow-mcp ${toolserverCpu.p50.toFixed(0)} ms`,
        );
      }
    }
    mock.assertDone();
  } finally {
    await mock.close();
    await ws.cleanup();
    for (const home of homes.values()) await rm(home, { recursive: true, force: true });
  }
  writeReport("first-request", { runs, builds: list, firstRequestMs: report });
}
