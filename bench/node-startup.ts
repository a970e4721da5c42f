// spawn → initialize and spawn → session/new answered, on Node 20 (this process's Node), 22 and 24, each without the
// module compile cache, with a cold one (an empty cache directory: the run writes it) and a warm one (filled by an
// earlier start); Node 20 has no compile cache, so only its "no cache" column is measured. Nodes 22
// and 24 run in the trees `npm run test:node` prepares (the same bundles; better-sqlite3 compiled for that Node):
// `node scripts/test-node.mjs <major> --prepare` is run first, which fetches and compiles only the first time.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT, spawnAcpAgent, type TempWorkspace } from "@crow/testkit";
import { benchCase, summarize, type Timing } from "./lib.js";

export type CacheMode = "off" | "cold" | "warm";
export interface NodeStartup {
  node: string;
  /** spawn → initialize answered, per cache mode; cold and warm are absent on a Node without the compile cache. */
  initializeMs: Partial<Record<CacheMode, Timing>>;
  /** spawn → session/new answered, likewise. */
  sessionReadyMs: Partial<Record<CacheMode, Timing>>;
}

/** The Node binary and crow bundle of one major: this process for its own major, else a prepared tree. */
function installation(major: string): { node: string; crow: string } {
  if (process.versions.node.split(".")[0] === major) {
    return { node: process.execPath, crow: path.join(REPO_ROOT, "packages/agent/bundle/crow.js") };
  }
  const tree = execFileSync(process.execPath, [path.join(REPO_ROOT, "scripts/test-node.mjs"), major, "--prepare"], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  return {
    node: path.join(tree, "..", "node", "package", "bin", "node"),
    crow: path.join(tree, "packages/agent/bundle/crow.js"),
  };
}

/** Whether `node` has the module compile cache (Node >= 22.1 reads NODE_COMPILE_CACHE; Node 20 has none). */
function hasCompileCache(node: string): boolean {
  const script = "process.stdout.write(String(typeof require('node:module').enableCompileCache === 'function'))";
  return execFileSync(node, ["-e", script], { encoding: "utf8" }) === "true";
}

/**
 * Each start is measured with the cache off (NODE_DISABLE_COMPILE_CACHE=1), cold (an empty cache directory: this
 * start writes it) and warm (the directory an earlier start filled). The three modes take turns run by run, so a
 * change in the machine's load (it is shared) touches all three alike.
 */
export async function startupByNode(
  llmUrl: string,
  ws: TempWorkspace,
  majors = ["20", "22", "24"],
  runs = 10,
  warmup = 2,
): Promise<NodeStartup[]> {
  const results: NodeStartup[] = [];
  for (const major of majors) {
    const { node, crow } = installation(major);
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    const modes: CacheMode[] = hasCompileCache(node) ? ["off", "cold", "warm"] : ["off"];
    const warmDir = mkdtempSync(path.join(tmpdir(), "crow-bench-cache-"));
    // Removed at the end: the agent's detached crow-mcp writes its cache as it exits, just after the agent.
    const dirs = [warmDir];
    // A start that fails names the Node and the cache mode (and, for an agent that died, how: testkit's AgentExitError).
    const start = (mode: CacheMode) => benchCase(`Node ${version}, compile cache ${mode}`, () => startOnce(mode));
    const startOnce = async (mode: CacheMode): Promise<{ init: number; ready: number }> => {
      const cacheHome = mode === "warm" ? warmDir : mkdtempSync(path.join(tmpdir(), "crow-bench-cache-"));
      dirs.push(cacheHome);
      // "" removes a variable from the agent's environment (the caller's NODE_COMPILE_CACHE would override ours).
      const env: Record<string, string> = {
        XDG_CACHE_HOME: cacheHome,
        NODE_COMPILE_CACHE: "",
        NODE_DISABLE_COMPILE_CACHE: mode === "off" ? "1" : "",
      };
      const started = performance.now();
      const agent = await spawnAcpAgent({ llmUrl, cwd: ws.dir, env, command: { file: node, args: [crow, "acp"] } });
      const init = performance.now() - started;
      await agent.newSession(ws.dir);
      const ready = performance.now() - started;
      await agent.close();
      return { init, ready };
    };
    // The warm-up starts of "warm" fill its directory; those of "cold" use fresh directories too.
    for (let i = 0; i < warmup; i++) for (const mode of modes) await start(mode);
    const samples = new Map(modes.map((mode) => [mode, { init: [] as number[], ready: [] as number[] }]));
    for (let i = 0; i < runs; i++) {
      for (const mode of modes) {
        const { init, ready } = await start(mode);
        samples.get(mode)?.init.push(init);
        samples.get(mode)?.ready.push(ready);
      }
    }
    for (const dir of new Set(dirs)) rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
    const pick = (key: "init" | "ready") =>
      Object.fromEntries([...samples].map(([mode, s]) => [mode, summarize(s[key])])) as NodeStartup["initializeMs"];
    results.push({ node: version, initializeMs: pick("init"), sessionReadyMs: pick("ready") });
  }
  return results;
}

/** The side-by-side tables (p50 / p95 in ms), spawn → initialize and spawn → session/new. */
export function formatStartup(results: readonly NodeStartup[]): string {
  const cell = (t: Timing | undefined) => (t ? `${t.p50.toFixed(0)} / ${t.p95.toFixed(0)}` : "n/a").padEnd(14);
  const runs = results[0]?.sessionReadyMs.off?.runs ?? 0;
  const lines = [`startup by Node and module compile cache (p50 / p95 ms, ${runs} starts each):`];
  for (const [title, key] of [
    ["spawn → initialize answered", "initializeMs"],
    ["spawn → session/new answered", "sessionReadyMs"],
  ] as const) {
    lines.push(`  ${title}`, `    ${"node".padEnd(10)}${"no cache".padEnd(14)}${"cold cache".padEnd(14)}warm cache`);
    for (const r of results) {
      const t = r[key];
      lines.push(`    ${r.node.padEnd(10)}${cell(t.off)}${cell(t.cold)}${cell(t.warm)}`.trimEnd());
    }
  }
  return lines.join("\n");
}
