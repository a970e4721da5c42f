import assert from "node:assert/strict";
import { cp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createSkillIndex, type Embedder, loadSkills, openAiEmbedder, type Skill, type SkillIndex } from "@crow/core";
import { chunkSkill, SkillEmbeddingCache } from "@crow/core/internal";
import { type MockLlm, startMockLlm, type TempWorkspace, tempWorkspace } from "@crow/testkit";
import { writeGeneratedSkills } from "./fixtures/skills/generate.js";

const GOOD = path.join(import.meta.dirname, "fixtures", "skills", "good");

/** Paraphrases that share a word stem (or a typo of one) with the intended skill: the keyword path must get them. */
const KEYWORD_CASES: Array<[string, string]> = [
  ["pull the text out of a PDF document", "pdf-processing"],
  ["extract tabels from pdfs", "pdf-processing"],
  ["combine multiple excel spreadsheets into a single workbook", "excel-merge"],
  ["my rebase stopped with conflicting changes in git", "git-conflict-resolution"],
  ["make my docker image smaller", "docker-image-slimming"],
  ["draft the changelog for the next version", "release-notes"],
  ["add a column to a postgres table without downtime", "sql-migration"],
  ["a test keeps failing intermittently in CI", "flaky-test-hunter"],
  ["document our REST endpoints from the openapi file", "api-docs"],
  ["write a good commit message for staged changes", "commit-message"],
  ["tidy up c++ formatting with clang", "c-plus-plus-style"],
];

/** Paraphrases sharing no word with their skill: only the embedder (with these synonyms) can connect them. */
const DENSE_CASES: Array<[string, string]> = [
  ["join a few spreadsheets together", "excel-merge"],
  ["reduce container footprint", "docker-image-slimming"],
  ["unreliable specs on the build server", "flaky-test-hunter"],
  ["settle diverging branches", "git-conflict-resolution"],
  ["grab words off scanned paperwork", "pdf-processing"],
];

/** The mock embedding model's notion of meaning: word → concept. */
const SYNONYMS: Record<string, string> = {
  join: "merge",
  spreadsheet: "excel",
  reduce: "shrink",
  container: "docker",
  footprint: "image",
  unreliable: "flaky",
  spec: "test",
  server: "ci",
  settle: "resolve",
  diverging: "conflict",
  branche: "git",
  grab: "extract",
  word: "text",
  scanned: "pdf",
  paperwork: "document",
};

function top(index: SkillIndex, query: string): string | undefined {
  return index.searchKeyword(query, 1)[0]?.skill.name;
}

describe("skill ranking over 1 000 generated skills plus the fixtures", () => {
  let ws: TempWorkspace;
  let mock: MockLlm;
  let skills: Skill[];
  let keyword: SkillIndex;
  let hybrid: SkillIndex;

  before(async () => {
    ws = await tempWorkspace();
    await writeGeneratedSkills(ws.path("generated"), 1000);
    const loaded = await loadSkills([ws.path("generated"), GOOD]);
    assert.deepEqual(loaded.problems, []);
    skills = loaded.skills;
    mock = await startMockLlm({ embeddings: { synonyms: SYNONYMS } });
    keyword = await createSkillIndex(skills);
    const embedder = openAiEmbedder({ baseURL: mock.url, model: "mock-embed" });
    hybrid = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(ws.path("cache")) });
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
  });

  test("the index holds all 1 010 skills; the hybrid one has vectors for them", () => {
    assert.equal(skills.length, 1010);
    assert.equal(keyword.dense, false);
    assert.equal(hybrid.dense, true);
    assert.deepEqual(hybrid.problems, []);
  });

  for (const [query, expected] of KEYWORD_CASES) {
    test(`keyword-only: "${query}" → ${expected}`, async () => {
      const result = await keyword.search(query, 5);
      assert.equal(result.mode, "keyword");
      assert.equal(result.hits[0]?.skill.name, expected, result.hits.map((h) => h.skill.name).join(", "));
    });
  }

  for (const [query, expected] of [...KEYWORD_CASES, ...DENSE_CASES]) {
    test(`hybrid (mock /v1/embeddings): "${query}" → ${expected}`, async () => {
      const result = await hybrid.search(query, 5);
      assert.equal(result.mode, "hybrid");
      assert.deepEqual(result.problems, []);
      assert.equal(result.hits[0]?.skill.name, expected, result.hits.map((h) => h.skill.name).join(", "));
      assert.ok(result.hits.length <= 5 && result.hits.every((h) => h.score > 0));
    });
  }

  test("the dense cases really need the embeddings: keywords alone miss every one of them", () => {
    for (const [query, expected] of DENSE_CASES) assert.notEqual(top(keyword, query), expected, query);
  });

  test("hits carry their keyword and dense scores, best first; keyword hits are only skills matching a term", async () => {
    const result = await hybrid.search("make my docker image smaller", 3);
    const [first, second] = result.hits;
    assert.ok(first && second && first.score >= second.score);
    assert.ok(first.keywordScore > 0 && (first.denseScore ?? 0) > (second.denseScore ?? 0));
    assert.deepEqual(keyword.searchKeyword("zzzqqq xyzzy", 5), []);
    assert.equal(keyword.searchKeyword("docker", 0).length, 0);
  });

  test("names close to a wrong one: typos and partial names", () => {
    assert.equal(keyword.closeNames("pdf-procesing")[0], "pdf-processing");
    assert.ok(keyword.closeNames("pdf").includes("pdf-processing"));
    assert.ok(keyword.closeNames("excel").includes("excel-merge"));
    assert.deepEqual(keyword.closeNames("qqqqqqqqqqqqqqqqqqqqqq"), []);
  });
});

describe("skill embeddings: cache, late interaction, failures", () => {
  let ws: TempWorkspace;
  let mock: MockLlm;
  before(async () => {
    ws = await tempWorkspace();
    mock = await startMockLlm({ embeddings: { synonyms: SYNONYMS } });
  });
  after(async () => {
    await mock.close();
    await ws.cleanup();
  });

  test("a second index build embeds nothing (memory and disk); a changed skill alone is re-embedded", async () => {
    await cp(GOOD, ws.path("skills"), { recursive: true });
    const { skills } = await loadSkills([ws.path("skills")]);
    const embedder = openAiEmbedder({ baseURL: mock.url, model: "mock-embed", batchSize: 8 });
    const cacheDir = ws.path("cache");
    const start = mock.embeddingRequests.length;

    const cache = new SkillEmbeddingCache(cacheDir);
    const first = await createSkillIndex(skills, { embedder, cache });
    const sent = mock.embeddingRequests.slice(start).flatMap((r) => r.inputs);
    assert.equal(
      sent.length,
      skills.reduce((n, s) => n + chunkSkill(s).length, 0),
    );
    assert.ok(mock.embeddingRequests.slice(start).every((r) => r.model === "mock-embed" && r.inputs.length <= 8));

    const afterFirst = mock.embeddingRequests.length;
    await createSkillIndex(skills, { embedder, cache });
    assert.equal(mock.embeddingRequests.length, afterFirst, "same process, same cache: no request");
    const fromDisk = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(cacheDir) });
    assert.equal(mock.embeddingRequests.length, afterFirst, "fresh cache on the same folder: no request");
    assert.equal(fromDisk.dense, true);
    const query = "join a few spreadsheets together";
    assert.deepEqual(
      (await fromDisk.search(query)).hits.map((h) => [h.skill.name, h.score]),
      (await first.search(query)).hits.map((h) => [h.skill.name, h.score]),
    );

    const otherModel = openAiEmbedder({ baseURL: mock.url, model: "other-embed" });
    await createSkillIndex(skills, { embedder: otherModel, cache: new SkillEmbeddingCache(cacheDir) });
    assert.ok(mock.embeddingRequests.length > afterFirst + 1, "another model never reuses these vectors");

    const file = ws.path("skills/api-docs/SKILL.md");
    await writeFile(file, "---\nname: api-docs\ndescription: Document HTTP APIs.\n---\nNew body.\n");
    const changed = await loadSkills([ws.path("skills")]);
    const before = mock.embeddingRequests.length;
    await createSkillIndex(changed.skills, { embedder, cache: new SkillEmbeddingCache(cacheDir) });
    const resent = mock.embeddingRequests.slice(before).flatMap((r) => r.inputs);
    assert.deepEqual(resent, ["api docs: Document HTTP APIs.", "New body."]);
  });

  test("several vectors per text are scored by MaxSim: each query vector's best match, averaged", async () => {
    // A token-level embedder over a tiny vocabulary: one one-hot vector per known word, like ColBERT's token vectors.
    const vocabulary = ["alpha", "beta", "gamma"];
    const tokenEmbedder: Embedder = {
      id: "test:tokens",
      embed: async (texts) =>
        texts.map((text) =>
          (text.toLowerCase().match(/[a-z]+/g) ?? []).map((word) => {
            const v = new Float32Array(vocabulary.length + 1);
            const i = vocabulary.indexOf(word);
            v[i < 0 ? vocabulary.length : i] = 1;
            return v;
          }),
        ),
    };
    const skill = (name: string, description: string, body: string): Skill => ({
      name,
      description,
      body,
      triggers: [],
      content: `${name}${description}${body}`,
      hash: `${name}-${description}-${body}`,
      dir: `/skills/${name}`,
      file: `/skills/${name}/SKILL.md`,
      files: [],
      root: "/skills",
    });
    const skills = [skill("both", "alpha gamma", "beta"), skill("one", "alpha alpha alpha", "gamma")];
    const index = await createSkillIndex(skills, {
      embedder: tokenEmbedder,
      cache: new SkillEmbeddingCache(false),
      denseWeight: 0.5,
    });
    const result = await index.search("alpha beta", 2);
    assert.equal(result.mode, "hybrid");
    assert.deepEqual(
      result.hits.map((h) => [h.skill.name, h.denseScore]),
      [
        ["both", 1],
        ["one", 0.5],
      ],
    );
  });

  test("an unreachable endpoint leaves a keyword index and says why", async () => {
    const port = await closedPort();
    const embedder = openAiEmbedder({ baseURL: `http://127.0.0.1:${port}/v1`, model: "m" });
    const { skills } = await loadSkills([GOOD]);
    const index = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(false) });
    assert.equal(index.dense, false);
    assert.equal(index.problems[0]?.severity, "warning");
    assert.match(index.problems[0]?.message ?? "", /skill embeddings failed \(skills are ranked by keywords only\)/);
    assert.match(index.problems[0]?.message ?? "", new RegExp(`127\\.0\\.0\\.1:${port}/v1/embeddings`));
    const result = await index.search("make my docker image smaller");
    assert.equal(result.mode, "keyword");
    assert.equal(result.hits[0]?.skill.name, "docker-image-slimming");
  });

  test("an endpoint error status is reported with the server's message", async () => {
    const failing: typeof fetch = async () =>
      new Response(JSON.stringify({ error: { message: "model not loaded" } }), { status: 503 });
    const embedder = openAiEmbedder({ baseURL: "http://embed.invalid/v1", model: "m", fetch: failing });
    const { skills } = await loadSkills([GOOD]);
    const index = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(false) });
    assert.match(index.problems[0]?.message ?? "", /answered 503: model not loaded/);
  });

  test("an endpoint error that echoes the API key is reported with the key replaced", async () => {
    const key = "sk-embed-key-5e58c1d2";
    const failing: typeof fetch = async () =>
      new Response(JSON.stringify({ error: { message: `invalid key ${key}` } }), { status: 401 });
    const embedder = openAiEmbedder({ baseURL: "http://embed.invalid/v1", model: "m", apiKey: key, fetch: failing });
    const { skills } = await loadSkills([GOOD]);
    const index = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(false) });
    assert.match(index.problems[0]?.message ?? "", /answered 401: invalid key \[redacted\]/);
  });

  test("a query embedding failure falls back to keywords for that search, with a problem", async () => {
    const own = await startMockLlm();
    const embedder = openAiEmbedder({ baseURL: own.url, model: "m" });
    const { skills } = await loadSkills([GOOD]);
    const index = await createSkillIndex(skills, { embedder, cache: new SkillEmbeddingCache(false) });
    assert.equal(index.dense, true);
    await own.close();
    const result = await index.search("draft the changelog for the next version");
    assert.equal(result.mode, "keyword");
    assert.equal(result.hits[0]?.skill.name, "release-notes");
    assert.match(result.problems[0]?.message ?? "", /this search used keywords only/);
  });
});

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return typeof address === "object" && address ? address.port : 1;
}
