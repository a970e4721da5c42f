/**
 * The skill index: BM25 (minisearch) over name, triggers, description and body, with prefix and light fuzzy
 * matching, optionally fused with a dense MaxSim score from an {@link Embedder}. The keyword path is synchronous
 * and needs nothing else; the dense path degrades to it, with a problem, whenever embeddings fail.
 */
import MiniSearch, { type SearchResult } from "minisearch";
import { errorText } from "../error-text.js";
import { SkillEmbeddingCache, type SkillVectors } from "./cache.js";
import { CHUNKER_VERSION, chunkSkill, DenseMatrix, normalize } from "./dense.js";
import type { Embedder, Vector } from "./embedder.js";
import { editDistance, stemTerm } from "./text.js";
import type { Skill, SkillHit, SkillProblem, SkillSearchResult } from "./types.js";

/** Options of {@link createSkillIndex}. */
export interface SkillIndexOptions {
  /** Enables the dense re-rank. Without it the index is keyword-only. */
  embedder?: Embedder;
  /** Where skill vectors are cached (default: a process-wide cache persisted under `<crow home>/cache/skills`). */
  cache?: SkillEmbeddingCache;
  /** Weight of the dense score in the fused score, 0–1 (default 0.7); the keyword score gets the rest. */
  denseWeight?: number;
  /** Cancels the embedding of the skills. */
  signal?: AbortSignal;
}

/** A searchable set of skills. */
export interface SkillIndex {
  readonly skills: readonly Skill[];
  /** Problems met while building (embedding failures); the index still works, keyword-only. */
  readonly problems: readonly SkillProblem[];
  /** Whether searches fuse dense scores (the embedder worked at build time). */
  readonly dense: boolean;
  /** The skill of that exact name. */
  get(name: string): Skill | undefined;
  /** Up to `limit` existing names close to `name` (typos, partial names, related words), best first. */
  closeNames(name: string, limit?: number): string[];
  /** BM25 ranking only, synchronous: the skills matching at least one query term, best first. */
  searchKeyword(query: string, limit?: number): SkillHit[];
  /**
   * The best `limit` skills for `query`: fused keyword + dense scores when the index is dense, else keyword only.
   * Never rejects: a failing query embedding falls back to keywords and is reported in `problems`.
   */
  search(query: string, limit?: number, signal?: AbortSignal): Promise<SkillSearchResult>;
}

/** Field boosts: what a skill is called and when it applies outweigh words that merely occur in its instructions. */
const BOOST = { name: 3, triggers: 3, description: 2, body: 1 };
const QUERY_CACHE_SIZE = 64;
let sharedCache: SkillEmbeddingCache | undefined;

/**
 * Builds the index. With an embedder, every skill's chunks are embedded (only those whose content hash is not
 * cached yet) before it resolves; a failure leaves a keyword-only index with a `warning` problem.
 */
export async function createSkillIndex(skills: readonly Skill[], options: SkillIndexOptions = {}): Promise<SkillIndex> {
  const list = [...skills];
  const position = new Map(list.map((s, i) => [s.name, i]));
  const keyword = buildKeywordIndex(list);
  const problems: SkillProblem[] = [];
  const denseWeight = Math.min(1, Math.max(0, options.denseWeight ?? 0.7));

  let matrix: DenseMatrix | undefined;
  const embedder = options.embedder;
  if (embedder && list.length > 0) {
    try {
      if (!options.cache && !sharedCache) sharedCache = new SkillEmbeddingCache();
      const cache = options.cache ?? (sharedCache as SkillEmbeddingCache);
      matrix = await embedSkills(list, embedder, cache, options.signal, problems);
    } catch (error) {
      problems.push(embeddingProblem(embedder, error, "skills are ranked by keywords only"));
    }
  }

  const searchKeyword = (query: string, limit = 5): SkillHit[] =>
    keyword
      .search(query)
      .slice(0, Math.max(0, limit))
      .map((r) => ({ skill: list[r.id as number] as Skill, score: r.score, keywordScore: r.score }));

  const queryVectors = new Map<string, Vector[]>();
  async function embedQuery(query: string, signal?: AbortSignal): Promise<Vector[]> {
    const cached = queryVectors.get(query);
    if (cached) return cached;
    const [vectors] = await (embedder as Embedder).embed([query], signal);
    if (!vectors || vectors.length === 0) throw new Error("the embedder returned no vector for the query");
    const normalized = vectors.map(normalize);
    if (queryVectors.size >= QUERY_CACHE_SIZE) queryVectors.delete(queryVectors.keys().next().value as string);
    queryVectors.set(query, normalized);
    return normalized;
  }

  return {
    skills: list,
    problems,
    dense: matrix !== undefined,
    get: (name) => {
      const i = position.get(name);
      return i === undefined ? undefined : list[i];
    },
    closeNames: (name, limit = 5) => closeNames(list, keyword, name, limit),
    searchKeyword,
    async search(query, limit = 5, signal) {
      if (!matrix || !embedder) return { hits: searchKeyword(query, limit), mode: "keyword", problems: [] };
      let vectors: Vector[];
      try {
        vectors = await embedQuery(query, signal);
        if (vectors.some((v) => v.length !== matrix?.dimensions)) {
          throw new Error(`query vector size differs from the skills' (${matrix.dimensions})`);
        }
      } catch (error) {
        const problem = embeddingProblem(embedder, error, "this search used keywords only");
        return { hits: searchKeyword(query, limit), mode: "keyword", problems: [problem] };
      }
      // Skills no closer than average and matching no term score 0: not worth listing.
      const hits = fuse(list, keyword.search(query), matrix.maxSim(vectors), denseWeight).filter((h) => h.score > 0);
      return { hits: hits.slice(0, Math.max(0, limit)), mode: "hybrid", problems: [] };
    },
  };
}

function buildKeywordIndex(skills: readonly Skill[]): MiniSearch {
  const index = new MiniSearch({
    idField: "id",
    fields: ["name", "triggers", "description", "body"],
    extractField: (doc, field) => {
      const value = (doc as Record<string, unknown>)[field];
      return Array.isArray(value) ? value.join(" ") : (value as string);
    },
    processTerm: (term) => stemTerm(term) ?? null,
    searchOptions: {
      boost: BOOST,
      // Prefix on short stems and fuzz on long ones only: both help with partial words and typos, both add noise.
      prefix: (term) => term.length >= 3,
      fuzzy: (term) => (term.length >= 5 ? 0.2 : false),
      maxFuzzy: 2,
      combineWith: "OR",
    },
  });
  index.addAll(
    skills.map((s, id) => ({ id, name: s.name, triggers: s.triggers, description: s.description, body: s.body })),
  );
  return index;
}

/**
 * Weighted sum of the keyword score (divided by the best one) and the dense score (how far above the average skill,
 * relative to the best), so both lie in [0, 1] whatever the BM25 or cosine scale of the query. Every skill is a
 * candidate: a paraphrase sharing no word with its skill is found by the dense side alone.
 */
function fuse(skills: readonly Skill[], keyword: SearchResult[], dense: Float32Array, denseWeight: number): SkillHit[] {
  const keywordScores = new Float64Array(skills.length);
  let bestKeyword = 0;
  for (const r of keyword) {
    keywordScores[r.id as number] = r.score;
    if (r.score > bestKeyword) bestKeyword = r.score;
  }
  let sum = 0;
  let bestDense = -Infinity;
  for (const d of dense) {
    sum += d;
    if (d > bestDense) bestDense = d;
  }
  const mean = sum / Math.max(1, dense.length);
  const spread = bestDense - mean;
  const hits: SkillHit[] = skills.map((skill, i) => {
    const k = keywordScores[i] as number;
    const d = dense[i] as number;
    const keywordPart = bestKeyword > 0 ? k / bestKeyword : 0;
    const densePart = spread > 0 ? Math.max(0, (d - mean) / spread) : 0;
    return { skill, score: denseWeight * densePart + (1 - denseWeight) * keywordPart, keywordScore: k, denseScore: d };
  });
  return hits.sort((a, b) => b.score - a.score || b.keywordScore - a.keywordScore);
}

async function embedSkills(
  skills: readonly Skill[],
  embedder: Embedder,
  cache: SkillEmbeddingCache,
  signal: AbortSignal | undefined,
  problems: SkillProblem[],
): Promise<DenseMatrix> {
  const store = await cache.store(embedder.id);
  const keyOf = (s: Skill) => `${CHUNKER_VERSION}:${s.hash}`;
  const missing = skills.filter((s) => !store.get(keyOf(s)));
  if (missing.length > 0) {
    const chunks = missing.map(chunkSkill);
    const vectors = await embedder.embed(chunks.flat(), signal);
    let next = 0;
    missing.forEach((skill, i) => {
      const count = (chunks[i] as string[]).length;
      const perChunk: SkillVectors = vectors.slice(next, next + count).map((vs) => vs.map(normalize));
      next += count;
      if (perChunk.length !== count) throw new Error("the embedder returned fewer vectors than texts");
      store.set(keyOf(skill), perChunk);
    });
    const flushProblem = await store.flush();
    if (flushProblem) problems.push({ severity: "warning", path: cache.dir || "", message: flushProblem });
  }
  return new DenseMatrix(skills.map((s) => (store.get(keyOf(s)) ?? []).flat()));
}

function embeddingProblem(embedder: Embedder, error: unknown, consequence: string): SkillProblem {
  const message = errorText(error);
  return { severity: "warning", path: embedder.id, message: `skill embeddings failed (${consequence}): ${message}` };
}

function closeNames(skills: readonly Skill[], keyword: MiniSearch, name: string, limit: number): string[] {
  const wanted = name.trim().toLowerCase();
  // Typos first (by edit distance), then skills sharing words with the name ("pdf" → "pdf-processing") by BM25.
  const typos = skills
    .map((s) => ({ name: s.name, distance: editDistance(wanted, s.name) }))
    .filter((c) => c.distance <= Math.max(2, Math.floor(wanted.length / 4)))
    .sort((a, b) => a.distance - b.distance || (a.name < b.name ? -1 : 1))
    .map((c) => c.name);
  const related = keyword.search(wanted.replace(/[-_]/g, " ")).map((r) => (skills[r.id as number] as Skill).name);
  return [...new Set([...typos, ...related])].slice(0, limit);
}
