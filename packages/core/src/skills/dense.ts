/**
 * The dense side of skill ranking: skills cut into chunks, chunk vectors kept L2-normalised, and ColBERT-style
 * MaxSim late interaction — for each query vector the best-matching skill vector, averaged over the query vectors.
 * With one query vector and one vector per chunk this is the best cosine over the skill's chunks, so a skill whose
 * relevant paragraph is buried in a long body still scores on that paragraph.
 */
import type { Vector } from "./embedder.js";
import type { Skill } from "./types.js";

/** Bumped when chunking changes, so cached vectors of the old chunks are not reused. */
export const CHUNKER_VERSION = 1;
const CHUNK_CHARS = 1200;
const MAX_BODY_CHUNKS = 8;

/**
 * The texts embedded for a skill: first its name, description and triggers (what the skill is for), then its body
 * in paragraph-aligned chunks of about {@link CHUNK_CHARS} characters, at most {@link MAX_BODY_CHUNKS}.
 */
export function chunkSkill(skill: Pick<Skill, "name" | "description" | "triggers" | "body">): string[] {
  const head = [`${skill.name.replace(/-/g, " ")}: ${skill.description}`];
  if (skill.triggers.length > 0) head.push(`Triggers: ${skill.triggers.join(", ")}`);
  const chunks = [head.join("\n")];
  let current = "";
  for (const paragraph of skill.body.split(/\n\s*\n/)) {
    const text = paragraph.trim();
    if (!text) continue;
    if (current && current.length + text.length + 2 > CHUNK_CHARS) {
      chunks.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${text}` : text.slice(0, CHUNK_CHARS * 2);
    if (chunks.length > MAX_BODY_CHUNKS) break;
  }
  if (current && chunks.length <= MAX_BODY_CHUNKS) chunks.push(current);
  return chunks;
}

/** Scales `v` to unit length in place (zero vectors stay zero) and returns it. */
export function normalize(v: Vector): Vector {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += (v[i] as number) * (v[i] as number);
  if (sum > 0) {
    const inv = 1 / Math.sqrt(sum);
    for (let i = 0; i < v.length; i++) v[i] = (v[i] as number) * inv;
  }
  return v;
}

/** All skills' vectors packed in one array for a cache-friendly scan. Vectors must be normalised and of one size. */
export class DenseMatrix {
  readonly dimensions: number;
  private readonly data: Float32Array;
  /** Vector rows of skill i are [offsets[i], offsets[i+1]). */
  private readonly offsets: Int32Array;

  constructor(perSkill: readonly (readonly Vector[])[]) {
    const first = perSkill.find((vs) => vs.length > 0)?.[0];
    this.dimensions = first?.length ?? 0;
    const rows = perSkill.reduce((n, vs) => n + vs.length, 0);
    this.data = new Float32Array(rows * this.dimensions);
    this.offsets = new Int32Array(perSkill.length + 1);
    let row = 0;
    perSkill.forEach((vectors, i) => {
      this.offsets[i] = row;
      for (const v of vectors) {
        if (v.length !== this.dimensions) {
          throw new Error(`embedding sizes differ (${v.length} and ${this.dimensions}); cannot compare them`);
        }
        this.data.set(v, row * this.dimensions);
        row++;
      }
    });
    this.offsets[perSkill.length] = row;
  }

  /**
   * MaxSim of the query vectors against each skill: Σ_q max_d q·d / |q|, on the cosine scale [-1, 1].
   * A skill without vectors scores -1. Query vectors must be normalised and of the matrix's size.
   */
  maxSim(query: readonly Vector[]): Float32Array {
    const skills = this.offsets.length - 1;
    const scores = new Float32Array(skills).fill(-1);
    if (query.length === 0) return scores;
    const dims = this.dimensions;
    const data = this.data;
    for (let s = 0; s < skills; s++) {
      const start = this.offsets[s] as number;
      const end = this.offsets[s + 1] as number;
      if (end === start) continue;
      let total = 0;
      for (const q of query) {
        let best = -Infinity;
        for (let r = start; r < end; r++) {
          const base = r * dims;
          let dot = 0;
          for (let k = 0; k < dims; k++) dot += (q[k] as number) * (data[base + k] as number);
          if (dot > best) best = dot;
        }
        total += best;
      }
      scores[s] = total / query.length;
    }
    return scores;
  }
}
