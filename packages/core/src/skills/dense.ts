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
    const offsets = this.offsets;
    // One pass over the matrix per query vector, adding each skill's best row to its total.
    const total = new Float32Array(skills);
    for (const q of query) {
      for (let s = 0; s < skills; s++) {
        const end = offsets[s + 1] as number;
        let top = -Infinity;
        for (let r = offsets[s] as number; r < end; r++) {
          const dot = dotAt(q, data, r * dims, dims);
          if (dot > top) top = dot;
        }
        total[s] = (total[s] as number) + top;
      }
    }
    for (let s = 0; s < skills; s++) {
      if ((offsets[s + 1] as number) > (offsets[s] as number)) scores[s] = (total[s] as number) / query.length;
    }
    return scores;
  }
}

/** q · data[base .. base+dims), unrolled by four: the scan is the whole cost of a dense search. */
function dotAt(q: Float32Array, data: Float32Array, base: number, dims: number): number {
  let a = 0;
  let b = 0;
  let c = 0;
  let d = 0;
  let k = 0;
  for (; k + 3 < dims; k += 4) {
    a += (q[k] as number) * (data[base + k] as number);
    b += (q[k + 1] as number) * (data[base + k + 1] as number);
    c += (q[k + 2] as number) * (data[base + k + 2] as number);
    d += (q[k + 3] as number) * (data[base + k + 3] as number);
  }
  for (; k < dims; k++) a += (q[k] as number) * (data[base + k] as number);
  return a + b + c + d;
}
