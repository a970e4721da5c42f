// Skill discovery over 1 000 generated skills (+ the 10 fixtures): loading the folders, building the BM25 index,
// `discover_skills` latency on the keyword path (target p50 < 5 ms), and the hybrid path against the mock LLM's
// deterministic /v1/embeddings (cold build, cached rebuild, query incl. one loopback HTTP round trip).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSkillIndex, loadSkills, openAiEmbedder, skillTools } from "@crow/core";
import { SkillEmbeddingCache } from "@crow/core/internal";
import { startMockLlm } from "@crow/testkit";
import { writeGeneratedSkills } from "../packages/core/test/fixtures/skills/generate.js";
import { formatTiming, measure, writeReport } from "./lib.js";

const COUNT = 1000;
const FIXTURES = path.join(import.meta.dirname, "..", "packages", "core", "test", "fixtures", "skills", "good");
const QUERIES = [
  "pull the text out of a PDF document",
  "combine multiple excel spreadsheets into a single workbook",
  "my rebase stopped with conflicting changes in git",
  "make my docker image smaller",
  "add a column to a postgres table without downtime",
  "a test keeps failing intermittently in CI",
  "write a good commit message for staged changes",
  "lint kubernetes manifests before a rollout",
];

async function once<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const start = process.hrtime.bigint();
  const value = await fn();
  return [value, Number(process.hrtime.bigint() - start) / 1e6];
}

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-bench-skills-"));
  const mock = await startMockLlm();
  try {
    await writeGeneratedSkills(path.join(dir, "skills"), COUNT);
    const roots = [path.join(dir, "skills"), FIXTURES];
    const [loaded, firstLoadMs] = await once(() => loadSkills(roots));
    const load = await measure(() => loadSkills(roots), 5, 1);
    const skills = loaded.skills;

    const [, firstBuildMs] = await once(() => createSkillIndex(skills));
    const build = await measure(() => createSkillIndex(skills), 10, 2);
    const index = await createSkillIndex(skills);
    const [discover] = skillTools(index);
    if (!discover) throw new Error("no discover_skills tool");

    let q = 0;
    const next = () => QUERIES[q++ % QUERIES.length] as string;
    const keyword = await measure(() => index.searchKeyword(next(), 5), 400, 40);
    const tool = await measure(() => discover.execute({ query: next() }), 400, 40);

    const embedder = openAiEmbedder({ baseURL: mock.url, model: "mock-embed" });
    const cacheDir = path.join(dir, "cache");
    const [, coldDenseMs] = await once(() =>
      createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(cacheDir) }),
    );
    const requestsCold = mock.embeddingRequests.length;
    const [hybrid, cachedDenseMs] = await once(() =>
      createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(cacheDir) }),
    );
    const rebuildRequests = mock.embeddingRequests.length - requestsCold;
    // Distinct queries each time, so every search pays its query embedding (no query-cache hits).
    let n = 0;
    const hybridSearch = await measure(() => hybrid.search(`${next()} ${n++}`, 5), 200, 20);

    console.log(`skills: ${skills.length} (${loaded.problems.length} problems)`);
    console.log(`load folders:            first ${firstLoadMs.toFixed(0)} ms, then ${formatTiming(load)}`);
    console.log(`BM25 index build:        first ${firstBuildMs.toFixed(0)} ms, then ${formatTiming(build)}`);
    console.log(`discover keyword search: ${formatTiming(keyword)}  (target p50 < 5 ms)`);
    console.log(`discover_skills tool:    ${formatTiming(tool)}  (search + formatting)`);
    console.log(
      `dense index build:       cold ${coldDenseMs.toFixed(0)} ms (${requestsCold} /v1/embeddings requests), ` +
        `cached ${cachedDenseMs.toFixed(0)} ms (${rebuildRequests} requests)`,
    );
    console.log(`hybrid search:           ${formatTiming(hybridSearch)}  (query embedding over loopback + MaxSim)`);

    writeReport("skills", {
      skills: skills.length,
      loadFirstMs: firstLoadMs,
      load,
      buildFirstMs: firstBuildMs,
      build,
      keywordSearch: keyword,
      discoverTool: tool,
      denseBuildColdMs: coldDenseMs,
      denseBuildColdRequests: requestsCold,
      denseBuildCachedMs: cachedDenseMs,
      denseBuildCachedRequests: rebuildRequests,
      hybridSearch,
    });
  } finally {
    await mock.close();
    await rm(dir, { recursive: true, force: true });
  }
}
