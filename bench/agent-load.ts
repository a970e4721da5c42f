// The agent bench's whole-process cases: many concurrent sessions in one `crow acp`, the first tool rounds of a fresh
// process, and `crow run` from start to exit. Each case reports the memory of the whole process tree (agent,
// toolservers, shells), sampled while it runs.
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CROW_BIN, type MockLlm, reply, spawnAcpAgent, textReply } from "@crow/testkit";
import { summarize, type Timing } from "./lib.js";
import { cpuMs, peakFootprintMb, processTree, type TreeWatch, watchTree } from "./proc.js";

/**
 * The `crow` bundle these cases run: the checkout's, or CROW_BENCH_BIN (another build placed one level below an
 * installed @crow/agent root, e.g. packages/agent/bundle-before/crow.js) to compare two builds under the same load.
 * A CROW_BENCH_BIN that is not a .js file is an executable launcher (an old build's `bundle/crow` shell script that
 * started crow from its V8 startup snapshot), run as it is.
 */
const bin = () => process.env.CROW_BENCH_BIN || CROW_BIN;
/** `crow <command>` as the cases run it: `node crow.js <command>`, as npm's bin shim does. */
const crow = (command: readonly string[]) =>
  bin().endsWith(".js") ? { file: process.execPath, args: [bin(), ...command] } : { file: bin(), args: [...command] };

/** The agent command of the cases. */
export const acp = () => crow(["acp"]);

/** One run of many sessions prompting at once in one agent. */
export interface ConcurrentRun extends TreeWatch {
  /** Wall clock from the first prompt sent to the last turn ended, ms. */
  wallMs: number;
  roundsPerSecond: number;
  /** Stop reasons of the turns, by count (all `end_turn` when everything worked). */
  stopReasons: Record<string, number>;
  /** Distinct physical pages of the tree at its peak (upper estimate; undefined unless root), MB. */
  footprintMb: number | undefined;
}

/**
 * `sessions` sessions opened in one `crow acp`, then all prompted at once, each turn `rounds` `read` rounds on average
 * (the mock answers requests in arrival order: the first sessions × rounds requests get tool calls, the last
 * `sessions` a final text, so every turn ends and the total is exact).
 */
export async function concurrentSessions(
  mock: MockLlm,
  dir: string,
  file: string,
  sessions: number,
  rounds: number,
): Promise<ConcurrentRun> {
  const agent = await spawnAcpAgent({ llmUrl: mock.url, cwd: dir, command: acp() });
  const ids: string[] = [];
  for (let i = 0; i < sessions; i++) ids.push((await agent.newSession(dir)).sessionId);
  for (let i = 0; i < sessions * rounds; i++) {
    mock.script(reply().toolCall("read", { file_path: file, offset: 1 + (i % 2) }));
  }
  for (let i = 0; i < sessions; i++) mock.script(textReply("done"));
  const stop = watchTree(agent.process.pid ?? 0, 50);
  const start = performance.now();
  const turns = await Promise.all(ids.map((id) => agent.prompt(id, "go")));
  const wallMs = performance.now() - start;
  const seen = stop();
  const footprintMb = peakFootprintMb(processTree(agent.process.pid ?? 0));
  await agent.close();
  const stopReasons: Record<string, number> = {};
  for (const turn of turns) stopReasons[turn.stopReason] = (stopReasons[turn.stopReason] ?? 0) + 1;
  return { ...seen, wallMs, roundsPerSecond: (sessions * rounds) / (wallMs / 1000), stopReasons, footprintMb };
}

/** The first tool rounds of fresh processes: wall clock and the CPU the agent and its toolserver spent, per round. */
export interface ColdRounds {
  wallMs: Timing;
  /** CPU (user + system) of the agent process per round, from the first LLM request to the end of the turn. */
  agentCpuMs: Timing;
  /** The same for the shared crow-mcp. */
  toolserverCpuMs: Timing;
}

/** The per-round figures of fresh processes, as they are collected. */
interface ColdSamples {
  wall: number[];
  agentCpu: number[];
  toolserverCpu: number[];
}

/**
 * The first `rounds` tool rounds of a fresh `crow acp` (session just opened, nothing warmed): from the first LLM
 * request to the end of the turn, per round, over `runs` fresh processes. The CPU the two processes spend in that span is reported too: on a shared machine it moves much less than the wall clock
 * (ticks of 10 ms, over all rounds).
 */
export async function coldRounds(
  mock: MockLlm,
  dir: string,
  file: string,
  rounds: number,
  runs: number,
): Promise<ColdRounds> {
  const samples: ColdSamples = { wall: [], agentCpu: [], toolserverCpu: [] };
  for (let run = 0; run < runs; run++) await coldRun(mock, dir, file, rounds, samples);
  return {
    wallMs: summarize(samples.wall),
    agentCpuMs: summarize(samples.agentCpu),
    toolserverCpuMs: summarize(samples.toolserverCpu),
  };
}

/** One fresh process of {@link coldRounds}: adds its per-round figures to `into`. */
async function coldRun(mock: MockLlm, dir: string, file: string, rounds: number, into: ColdSamples): Promise<void> {
  const agent = await spawnAcpAgent({ llmUrl: mock.url, cwd: dir, command: acp() });
  const { sessionId } = await agent.newSession(dir);
  for (let i = 0; i < rounds; i++) mock.script(reply().toolCall("read", { file_path: file, offset: 1 + (i % 2) }));
  mock.script(textReply("done"));
  const before = mock.requests.length;
  const [agentPid = 0, toolserverPid = 0] = processTree(agent.process.pid ?? 0);
  const turn = agent.prompt(sessionId, "go");
  // Raced with the turn: an agent that dies before its first request rejects the turn (saying why), and the case fails
  // with that error instead of leaving the rejection unhandled while the mock waits forever.
  await Promise.race([mock.waitForRequests(before + 1), turn]);
  const start = performance.now();
  const cpuBefore = [cpuMs(agentPid), cpuMs(toolserverPid)];
  await turn;
  into.wall.push((performance.now() - start) / rounds);
  into.agentCpu.push((cpuMs(agentPid) - (cpuBefore[0] ?? 0)) / rounds);
  into.toolserverCpu.push((cpuMs(toolserverPid) - (cpuBefore[1] ?? 0)) / rounds);
  await agent.close();
}

/** Runs of `crow run "<prompt>"` (pipes, no TTY) doing `rounds` tool rounds. */
export interface CrowRunCase {
  /** Spawn → first LLM request arrived at the mock. */
  firstRequestMs: Timing;
  /** Spawn → exit. */
  totalMs: Timing;
  /** Highest tree RSS of any run (sum of the processes' RSS at one sample), MB. */
  peakTreeRssMb: number;
  peakProcesses: number;
  /** Highest distinct physical footprint of the tree, read once mid-task (upper estimate; undefined unless root), MB. */
  footprintMb: number | undefined;
  exitCodes: Array<number | null>;
}

export async function crowRun(
  mock: MockLlm,
  dir: string,
  file: string,
  rounds: number,
  runs: number,
  options: {
    /** Variables to leave out of the environment (e.g. NODE_EXTRA_CA_CERTS, to show what it costs). */
    without?: readonly string[];
    /** Configure the provider in config.yaml, as `crow init` does, instead of the environment. */
    configYaml?: boolean;
  } = {},
) {
  const home = await mkdtemp(path.join(tmpdir(), "crow-bench-home-"));
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined || options.without?.includes(key)) continue;
    if (!key.startsWith("CROW_") && !key.startsWith("OPENAI_")) env[key] = value;
  }
  if (options.configYaml) {
    const yaml = `providers:\n  mock:\n    base_url: ${mock.url}\nmodels:\n  mock-model:\n    provider: mock\n`;
    await writeFile(path.join(home, "config.yaml"), yaml);
  } else {
    Object.assign(env, { OPENAI_BASE_URL: mock.url, CROW_MODEL: "mock-model" });
  }
  env.CROW_HOME = home;
  const command = crow(["run", "go"]);
  const first: number[] = [];
  const total: number[] = [];
  const exitCodes: Array<number | null> = [];
  let peakTreeRssMb = 0;
  let peakProcesses = 0;
  let footprintMb: number | undefined;
  for (let run = 0; run < runs; run++) {
    for (let i = 0; i < rounds; i++) mock.script(reply().toolCall("read", { file_path: file, offset: 1 + (i % 2) }));
    mock.script(textReply("done"));
    const before = mock.requests.length;
    const start = performance.now();
    const child = spawn(command.file, command.args, {
      env,
      cwd: dir,
      stdio: ["pipe", "pipe", "pipe"],
    });
    child.stdout.resume();
    let stderr = "";
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    child.stdin.end();
    const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
    // A run that ends before the mock has seen its requests fails the case, saying how it ended (once its stderr is
    // read to the end), instead of waiting forever.
    const endedEarly = new Promise<never>((_, reject) =>
      child.once("close", (code, signal) => {
        const how = signal ? `was killed by ${signal}` : `exited with code ${code}`;
        reject(new Error(`crow run (pid ${child.pid}) ${how} before its requests; the end of its stderr:\n${stderr}`));
      }),
    );
    endedEarly.catch(() => {});
    const stop = watchTree(child.pid ?? 0, 20);
    await Promise.race([mock.waitForRequests(before + 1), endedEarly]);
    first.push(performance.now() - start);
    // Mid-task: every process is up (the last request would race the exit).
    await Promise.race([mock.waitForRequests(before + Math.ceil(rounds / 2)), endedEarly]);
    const mb = peakFootprintMb(processTree(child.pid ?? 0));
    if (mb !== undefined) footprintMb = Math.max(footprintMb ?? 0, mb);
    exitCodes.push(await exited);
    total.push(performance.now() - start);
    // Peaks are kept from the samples taken while the tree lived.
    const watched = stop();
    peakTreeRssMb = Math.max(peakTreeRssMb, watched.peakTreeRssMb);
    peakProcesses = Math.max(peakProcesses, watched.peakProcesses);
  }
  await rm(home, { recursive: true, force: true });
  return {
    firstRequestMs: summarize(first),
    totalMs: summarize(total),
    peakTreeRssMb,
    peakProcesses,
    footprintMb,
    exitCodes,
  } satisfies CrowRunCase;
}

/**
 * The machine's own start: `node -e 0` (this process's Node), p50 of `runs`, with the environment as is and, when
 * `NODE_EXTRA_CA_CERTS` is set, without it (Node 20 reads those certificates at every start, before any code runs;
 * Node 22 and later read them on first use). A reference for comparing start times across machines and sessions.
 */
export function nodeStart(runs = 10): { asIs: Timing; withoutExtraCaCerts: Timing | undefined } {
  const time = (env: NodeJS.ProcessEnv) => {
    const samples: number[] = [];
    for (let i = 0; i < runs; i++) {
      const start = performance.now();
      spawnSync(process.execPath, ["-e", "0"], { env, stdio: "ignore" });
      samples.push(performance.now() - start);
    }
    return summarize(samples);
  };
  const { NODE_EXTRA_CA_CERTS: extra, ...rest } = process.env;
  return { asIs: time(process.env), withoutExtraCaCerts: extra ? time(rest) : undefined };
}
