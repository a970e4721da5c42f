/**
 * Embedders for the optional dense re-rank of skills. The interface allows several vectors per text (token vectors
 * of a ColBERT-style model) so that ranking can use true MaxSim late interaction; an OpenAI-compatible
 * `/v1/embeddings` endpoint gives one vector per text. Plain `fetch`: no SDK needed for one POST.
 */
import { startDeadline } from "@crow/util";
import { errorText } from "../error-text.js";
import { redactSecrets } from "../redact.js";

/** A dense vector. */
export type Vector = Float32Array;

/** Turns texts into vectors. */
export interface Embedder {
  /** Identifies the model and endpoint; part of the embedding cache key, so two models never share vectors. */
  readonly id: string;
  /**
   * One entry per input text, in order: one vector (a sentence embedding) or several (token or chunk vectors for
   * late interaction). Rejects on any failure; callers fall back to keyword ranking.
   */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Vector[][]>;
}

/** An OpenAI-compatible embeddings endpoint (OpenAI, vLLM, llama.cpp, Ollama, LiteLLM, TEI…). */
export interface OpenAiEmbedderOptions {
  /** Base URL up to the version, e.g. `http://localhost:8000/v1` (`/embeddings` is appended). */
  baseURL: string;
  model: string;
  apiKey?: string;
  /** Asks for shorter vectors where the model supports it (OpenAI `dimensions`). */
  dimensions?: number;
  /** Texts per request (default 64). */
  batchSize?: number;
  /** Requests in flight at once (default 2). */
  concurrency?: number;
  /** Per-request timeout in milliseconds (default 30 000). */
  timeoutMs?: number;
  /** Injected for tests; defaults to the global fetch. */
  fetch?: typeof fetch;
}

interface EmbeddingsResponse {
  data?: Array<{ index?: number; embedding?: number[] | string }>;
}

/** An {@link Embedder} over `POST <baseURL>/embeddings`. Errors name the status and the server's message. */
export function openAiEmbedder(options: OpenAiEmbedderOptions): Embedder {
  const url = `${options.baseURL.replace(/\/+$/, "")}/embeddings`;
  const batchSize = Math.max(1, options.batchSize ?? 64);
  const concurrency = Math.max(1, options.concurrency ?? 2);
  const doFetch = options.fetch ?? fetch;

  async function embedBatch(texts: string[], signal?: AbortSignal): Promise<Vector[][]> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    const body: Record<string, unknown> = { model: options.model, input: texts, encoding_format: "float" };
    if (options.dimensions) body.dimensions = options.dimensions;
    const timeoutMs = options.timeoutMs ?? 30_000;
    // One deadline for the request and its body, on a timer: AbortSignal.timeout stops firing after a GC.
    const deadline = startDeadline(timeoutMs, signal);
    let response: Response;
    let raw: string;
    try {
      response = await doFetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: deadline.signal });
      raw = await response.text();
    } catch (error) {
      const reason = deadline.timedOut() ? `no complete answer within ${timeoutMs / 1000} s` : errorText(error);
      throw new Error(`embeddings request to ${url} failed: ${reason}`);
    } finally {
      deadline.clear();
    }
    if (!response.ok) {
      // The server's message may echo the key it was sent.
      const message = redactSecrets(errorMessage(raw), [options.apiKey]);
      throw new Error(`embeddings endpoint ${url} answered ${response.status}: ${message}`);
    }
    let parsed: EmbeddingsResponse;
    try {
      parsed = JSON.parse(raw) as EmbeddingsResponse;
    } catch {
      const start = redactSecrets(raw.slice(0, 120), [options.apiKey]);
      throw new Error(`embeddings endpoint ${url} answered something that is not JSON: ${start}`);
    }
    const data = parsed.data ?? [];
    if (data.length !== texts.length) {
      throw new Error(`embeddings endpoint ${url} returned ${data.length} vectors for ${texts.length} inputs`);
    }
    const out: Vector[][] = new Array(texts.length);
    data.forEach((item, position) => {
      const index = item.index ?? position;
      const embedding = item.embedding;
      if (embedding === undefined || index < 0 || index >= texts.length) {
        throw new Error(`embeddings endpoint ${url} returned a malformed item at position ${position}`);
      }
      out[index] = [typeof embedding === "string" ? fromBase64(embedding) : Float32Array.from(embedding)];
    });
    return out;
  }

  return {
    id: `openai:${url}#${options.model}${options.dimensions ? `@${options.dimensions}` : ""}`,
    async embed(texts, signal) {
      const batches: string[][] = [];
      for (let i = 0; i < texts.length; i += batchSize) batches.push(texts.slice(i, i + batchSize));
      const results: Vector[][][] = new Array(batches.length);
      let next = 0;
      const worker = async () => {
        while (next < batches.length) {
          const i = next++;
          results[i] = await embedBatch(batches[i] as string[], signal);
        }
      };
      await Promise.all(Array.from({ length: Math.min(concurrency, batches.length) }, worker));
      return results.flat();
    },
  };
}

function errorMessage(raw: string): string {
  try {
    const parsed = JSON.parse(raw) as { error?: { message?: string } | string; message?: string };
    const error = parsed.error;
    const message = typeof error === "string" ? error : (error?.message ?? parsed.message);
    if (message) return message;
  } catch {
    // not JSON: show the text itself
  }
  return raw.slice(0, 200) || "(empty body)";
}

/** Little-endian float32 base64, as OpenAI sends with `encoding_format: "base64"`. */
export function fromBase64(text: string): Vector {
  const bytes = Buffer.from(text, "base64");
  const copy = new Uint8Array(bytes.byteLength);
  copy.set(bytes);
  return new Float32Array(copy.buffer, 0, Math.floor(copy.byteLength / 4));
}

/** The inverse of {@link fromBase64} (used by the disk cache). */
export function toBase64(vector: Vector): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString("base64");
}
