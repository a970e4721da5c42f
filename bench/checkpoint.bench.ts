// Workspace checkpoints (issue #30): a 20 000-file workspace (200 directories × 100 files of ~1 KB) in a shadow git
// repository. Measures the first snapshot (cold: every file hashed once), a snapshot when nothing changed, a snapshot
// with 10 changed files (target ≤ 150 ms: the persistent index's stat cache rehashes only those), a whole turn's cost
// (snapshot before + snapshot after + the diff), restoring 10 files, the rewind's check for changes made between two
// turns (one diff per turn crossed), the garbage collection's `git gc --prune=now`,
// and the shadow repository's disk use before and after that gc.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { ShadowRepo } from "../packages/core/src/checkpoints/shadow-repo.js";
import { formatTiming, measure, writeReport } from "./lib.js";

const DIRS = 200;
const PER_DIR = 100;
const CHANGED = 10;

const du = (dir: string): number =>
  Number(execFileSync("du", ["-sk", dir], { encoding: "utf8" }).split("\t")[0]) * 1024;
const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

export async function run(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), "crow-bench-checkpoint-"));
  try {
    const ws = path.join(root, "ws");
    for (let d = 0; d < DIRS; d++) {
      const dir = path.join(ws, `pkg${d}`, "src");
      mkdirSync(dir, { recursive: true });
      for (let f = 0; f < PER_DIR; f++) {
        writeFileSync(path.join(dir, `module${f}.ts`), `export const value${f} = ${d * PER_DIR + f};\n`.repeat(30));
      }
    }
    const gitDir = path.join(root, "shadow.git");
    const repo = new ShadowRepo(gitDir, ws, 10 * 1024 * 1024);
    const workspaceBytes = du(ws);

    let start = performance.now();
    await repo.snapshot();
    const firstMs = performance.now() - start;
    const firstLooseBytes = du(gitDir);
    start = performance.now();
    await repo.packIfDue();
    const packMs = performance.now() - start;
    const firstPackedBytes = du(gitDir);
    const unchanged = await measure(() => repo.snapshot(), 20, 2);

    let round = 0;
    const change = () => {
      round++;
      for (let i = 0; i < CHANGED; i++) {
        writeFileSync(path.join(ws, `pkg${(i * 17) % DIRS}`, "src", `module${i}.ts`), `// round ${round}\n`);
      }
    };
    const tenChanged: number[] = [];
    const turn: number[] = [];
    const commits: string[] = [];
    for (let i = 0; i < 22; i++) {
      const before = await repo.snapshot();
      change();
      start = performance.now();
      const after = await repo.snapshot();
      const changedMs = performance.now() - start;
      await repo.changes(before.commit, after.commit);
      const turnMs = performance.now() - start + (i > 1 ? unchanged.p50 : 0);
      commits.push(before.commit);
      if (i < 2) continue; // warm-up
      tenChanged.push(changedMs);
      turn.push(turnMs);
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const p50 = (xs: number[]) => sorted(xs)[Math.floor(xs.length / 2)] ?? Number.NaN;
    const p95 = (xs: number[]) => sorted(xs)[Math.floor(xs.length * 0.95)] ?? Number.NaN;

    const target = commits[2] ?? "";
    const paths = Array.from({ length: CHANGED }, (_, i) => `pkg${(i * 17) % DIRS}/src/module${i}.ts`);
    const restore = await measure(() => repo.restore(target, paths), 10, 1);
    // The rewind's guard against changes made between two turns (the previous turn's snapshot after against the next
    // one's before): one diff per pair of turns crossed, paid at rewind time only, nothing per turn. Measured on two
    // snapshots 10 files apart (the user edited 10 files between the turns).
    const betweenTurns = await measure(() => repo.changes(commits[2] ?? "", commits[3] ?? ""), 20, 2);

    const looseBytes = du(gitDir);
    start = performance.now();
    await repo.forget([], "now");
    const gcMs = performance.now() - start;
    const packedBytes = du(gitDir);
    const noChangeAfterGc = await measure(() => repo.snapshot(), 10, 1);

    console.log(`workspace: ${DIRS * PER_DIR} files, ${mb(workspaceBytes)} on disk`);
    console.log(`first snapshot (cold, every file hashed): ${firstMs.toFixed(0)} ms`);
    console.log(
      `after the first snapshot: ${mb(firstLooseBytes)} loose, packed in ${packMs.toFixed(0)} ms (after the turn, in the background) to ${mb(firstPackedBytes)}`,
    );
    console.log(`snapshot, nothing changed:      ${formatTiming(unchanged)}`);
    console.log(
      `snapshot, ${CHANGED} files changed:     p50 ${p50(tenChanged).toFixed(2)} ms  p95 ${p95(tenChanged).toFixed(2)} ms  (${tenChanged.length} runs; target ≤ 150 ms)`,
    );
    console.log(`a turn (before + after + diff): p50 ${p50(turn).toFixed(2)} ms`);
    console.log(`restore ${CHANGED} files:              ${formatTiming(restore)}`);
    console.log(`rewind guard, per turn crossed: ${formatTiming(betweenTurns)}  (nothing added per turn)`);
    console.log(`git gc --prune=now:             ${gcMs.toFixed(0)} ms`);
    console.log(`shadow repository after 22 turns: ${mb(looseBytes)} before gc, ${mb(packedBytes)} after`);
    console.log(`snapshot, nothing changed, after gc: ${formatTiming(noChangeAfterGc)}`);
    writeReport("checkpoint", {
      files: DIRS * PER_DIR,
      workspaceBytes,
      firstSnapshotMs: firstMs,
      firstLooseBytes,
      packMs,
      firstPackedBytes,
      unchanged,
      tenChanged: { p50: p50(tenChanged), p95: p95(tenChanged), runs: tenChanged.length },
      turnP50Ms: p50(turn),
      restore,
      betweenTurns,
      gcMs,
      looseBytes,
      packedBytes,
      noChangeAfterGc,
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
