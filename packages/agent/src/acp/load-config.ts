/**
 * The configuration `crow acp` runs with, loaded and applied: the child processes' environment follows it (see
 * tools/child-env.ts), the shared crow-mcp is (re)started under it, and with `OPENAI_BASE_URL` alone the endpoint's
 * only model is adopted. Used at startup and again when signing in (auth.ts) reads what `crow init` just wrote.
 * Notes and notices go to stderr (stdout is ACP). Throws `ConfigError` for a configuration that does not load.
 */

import { log } from "../base/log.js";
import { type AgentConfig, adoptSingleModel, ConfigError, loadConfig } from "../config/index.js";
import { useConfigEnvironment } from "../tools/child-env.js";
import { startSandboxCheck } from "../tools/sandbox.js";
import { startSharedToolserver } from "../tools/shared.js";

export async function loadAcpConfig(): Promise<AgentConfig> {
  const config = loadConfig();
  // What child processes may see: no keys, no .env but what crow-mcp reads and child_env.allow names.
  useConfigEnvironment(config);
  // The shared crow-mcp boots while the ACP layer and the runtime load, so the first session's tools are ready
  // sooner (every session, in any directory, is an MCP session of it; see tools/shared.ts). The head start's is
  // kept unless the configuration changes its environment.
  startSharedToolserver();
  // Whether bubblewrap works here is known by the time the first session opens (tools/sandbox.ts).
  startSandboxCheck(config.sandbox);
  for (const note of config.notes) log.info(note);
  const adopted = await adoptSingleModel(config);
  for (const notice of adopted ? [...config.notices, adopted] : config.notices) {
    process.stderr.write(`crow: ${notice}\n`);
  }
  return config;
}

/**
 * {@link loadAcpConfig} for a command's start: a configuration that does not load is said on stderr and comes back as
 * exit code 2 (bad setup), anything else is thrown.
 */
export async function loadAcpConfigOrExit(): Promise<AgentConfig | 2> {
  try {
    return await loadAcpConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`crow: ${error.message}\n`);
    return 2;
  }
}
