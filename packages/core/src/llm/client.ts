import type { LlmClient, LlmClientOptions } from "./types.js";

/** Creates an OpenAI-compatible streaming client (see `LlmClient` for the never-throws contract). */
export function createLlmClient(_options: LlmClientOptions): LlmClient {
  throw new Error("not implemented yet");
}
