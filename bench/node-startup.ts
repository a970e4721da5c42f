// spawn → session/new answered, on Node 20 (this process's Node), 22 and 24, each without the module compile cache,
// with a cold one (an empty cache directory: the run writes it) and a warm one (filled by an earlier start). Nodes 22
// and 24 run in the trees `npm run test:node` prepares (the same bundles; better-sqlite3 compiled for that Node):
// `node scripts/test-node.mjs <major> --prepare` is run first, which fetches and compiles only the first time.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { REPO_ROOT, spawnAcpAgent, type TempWorkspace } from "@crow/testkit";
import { measureSpan, type Timing } from "./lib.js";

export type CacheMode = "off" | "cold" | "warm";
export interface NodeStartup {
  node: string;
  sessionReadyMs: Record<CacheMode, Timing>;
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

export async function startupByNode(
  llmUrl: string,
  ws: TempWorkspace,
  majors = ["20", "22", "24"],
): Promise<NodeStartup[]> {
  const results: NodeStartup[] = [];
  for (const major of majors) {
    const { node, crow } = installation(major);
    const version = execFileSync(node, ["--version"], { encoding: "utf8" }).trim();
    const warmDir = mkdtempSync(path.join(tmpdir(), "crow-bench-cache-"));
    const span = async (mode: CacheMode): Promise<number> => {
      const cacheHome = mode === "warm" ? warmDir : mkdtempSync(path.join(tmpdir(), "crow-bench-cache-"));
      const env: Record<string, string> = { XDG_CACHE_HOME: cacheHome, NODE_COMPILE_CACHE: "" };
      if (mode === "off") env.NODE_DISABLE_COMPILE_CACHE = "1";
      else env.NODE_DISABLE_COMPILE_CACHE = "";
      const start = performance.now();
      const agent = await spawnAcpAgent({ llmUrl, cwd: ws.dir, env, command: { file: node, args: [crow, "acp"] } });
      await agent.newSession(ws.dir);
      const elapsed = performance.now() - start;
      await agent.close();
      if (mode !== "warm") rmSync(cacheHome, { recursive: true, force: true });
      return elapsed;
    };
    const sessionReadyMs = {
      off: await measureSpan(() => span("off"), 10, 2),
      // The warm-up runs of "cold" use fresh directories too; those of "warm" fill its directory.
      cold: await measureSpan(() => span("cold"), 10, 2),
      warm: await measureSpan(() => span("warm"), 10, 2),
    };
    rmSync(warmDir, { recursive: true, force: true });
    results.push({ node: version, sessionReadyMs });
  }
  return results;
}

/** The side-by-side table (p50, p95 in ms). */
export function formatStartup(results: readonly NodeStartup[]): string {
  const cell = (t: Timing) => `${t.p50.toFixed(0)} / ${t.p95.toFixed(0)}`.padEnd(14);
  const lines = [
    "spawn → session/new by Node (p50 / p95 ms):",
    `  ${"node".padEnd(10)}${"no cache".padEnd(14)}${"cold cache".padEnd(14)}warm cache`,
  ];
  for (const r of results) {
    lines.push(
      `  ${r.node.padEnd(10)}${cell(r.sessionReadyMs.off)}${cell(r.sessionReadyMs.cold)}${cell(r.sessionReadyMs.warm)}`,
    );
  }
  return lines.join("\n");
}
