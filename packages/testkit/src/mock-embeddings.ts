/**
 * The mock LLM's `POST /v1/embeddings`: a deterministic stand-in for an embedding model. Each text becomes a
 * hashed bag of words (lowercased, plural "s" dropped, stop words skipped, every word mapped through `synonyms`
 * first), L2-normalised. Texts sharing words — or words the test declared synonymous — get a high cosine, so a
 * paraphrase test exercises the real dense path (HTTP, chunking, MaxSim, fusion) without a model.
 */
import type { ServerResponse } from "node:http";

/** Options of the mock embedder (`startMockLlm({ embeddings })`). */
export interface MockEmbeddingOptions {
  /** Vector size (default 512). */
  dimensions?: number;
  /** word → concept: words mapped to the same concept embed identically ("spreadsheet" → "excel"). */
  synonyms?: Record<string, string>;
}

/** One `/v1/embeddings` request as received. */
export interface EmbeddingRequest {
  model: string;
  inputs: string[];
}

const STOP = new Set(
  "a an and are as at be by for from how i in into is it of on or that the this to with you your".split(" "),
);

/** The mock's vector for `text` (exported so tests can compute expected similarities). */
export function mockEmbedding(text: string, options: MockEmbeddingOptions = {}): number[] {
  const dims = options.dimensions ?? 512;
  const vector = new Array<number>(dims).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    if (STOP.has(raw)) continue;
    const word = raw.length > 3 && raw.endsWith("s") && !raw.endsWith("ss") ? raw.slice(0, -1) : raw;
    const concept = options.synonyms?.[word] ?? options.synonyms?.[raw] ?? word;
    const h = fnv1a(concept);
    vector[h % dims] = (vector[h % dims] ?? 0) + ((h >>> 16) & 1 ? 1 : -1);
  }
  const norm = Math.sqrt(vector.reduce((s, v) => s + v * v, 0)) || 1;
  return vector.map((v) => v / norm);
}

/**
 * Answers one embeddings request body (OpenAI shape: `input` a string or a list, `encoding_format` float or base64)
 * and records it. Returns false when the body is not a valid request (a 400 was sent).
 */
export function answerEmbeddings(
  raw: string,
  res: ServerResponse,
  options: MockEmbeddingOptions,
  log: EmbeddingRequest[],
): boolean {
  let body: { model?: unknown; input?: unknown; encoding_format?: unknown };
  try {
    body = JSON.parse(raw) as typeof body;
  } catch {
    body = {};
  }
  const inputs = typeof body.input === "string" ? [body.input] : body.input;
  if (!Array.isArray(inputs) || !inputs.every((i) => typeof i === "string")) {
    res.writeHead(400, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: { message: "mock embeddings: input must be a string or a list of strings" } }));
    return false;
  }
  const model = typeof body.model === "string" ? body.model : "";
  log.push({ model, inputs });
  const data = inputs.map((text, index) => {
    const vector = mockEmbedding(text, options);
    const embedding =
      body.encoding_format === "base64" ? Buffer.from(Float32Array.from(vector).buffer).toString("base64") : vector;
    return { object: "embedding", index, embedding };
  });
  const tokens = inputs.reduce((n, text) => n + text.split(/\s+/).length, 0);
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify({ object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  return true;
}

function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
