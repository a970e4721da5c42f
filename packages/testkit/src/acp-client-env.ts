/** The environment and private home of a `crow acp` spawned by the test client. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

/** The options of `spawnAcpAgent` that shape the agent's environment. */
export interface AgentEnvOptions {
  llmUrl?: string;
  model?: string;
  models?: string[];
  env?: Record<string, string>;
}

/** The agent's environment: this process's, without the caller's LLM settings, plus the test's. */
export function agentEnv(options: AgentEnvOptions): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value;
  for (const key of ["OPENAI_API_KEY", "OPENAI_BASE_URL", "CROW_MODEL", "CROW_MODELS"]) delete env[key];
  Object.assign(env, {
    CROW_MODEL: options.model ?? "mock-model",
    // Fast retries: tests script failures, they do not wait for real backoff.
    CROW_MAX_RETRIES: "2",
    CROW_RETRY_BASE_MS: "5",
  });
  if (options.llmUrl) env.OPENAI_BASE_URL = options.llmUrl;
  if (options.models) env.CROW_MODELS = options.models.join(",");
  for (const [key, value] of Object.entries(options.env ?? {})) {
    if (value === "") delete env[key];
    else env[key] = value;
  }
  return env;
}

/**
 * Tests never touch the real HOME: without an explicit HOME and CROW_HOME the agent gets a fresh directory for both
 * (its ~/.crow config and store, and what its shells write: ~/.bash_history, ~/.python_history), removed on close.
 * Returns it, or undefined when the test chose its own.
 */
export function privateHome(env: Record<string, string>, options: AgentEnvOptions): string | undefined {
  if (options.env?.CROW_HOME && options.env.HOME) return undefined;
  const home = mkdtempSync(path.join(tmpdir(), "crow-home-"));
  if (!options.env?.CROW_HOME) env.CROW_HOME = home;
  if (!options.env?.HOME) env.HOME = home;
  return home;
}
