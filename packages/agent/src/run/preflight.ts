/**
 * What `crow run` checks before it starts the agent: the configuration loads, a provider and model are configured,
 * and `--mode`/`--model` name something that exists. A failure here is a usage or configuration error (exit 2) and
 * nothing is stored: no session is opened for a run that could not have reached the model.
 */

import { UsageError } from "../base/exit-codes.js";
import {
  type AgentConfig,
  adoptSingleModel,
  ConfigError,
  findModel,
  loadConfig,
  providerProblem,
  signedOutText,
} from "../config/index.js";
import { MODES } from "../config/modes.js";
import type { RunOptions } from "./args.js";

/** A configuration that cannot run a prompt; the message is shown as is (exit 2). */
export class PreflightError extends Error {}

/**
 * Checks `options` against the configuration of `env`. Returns that configuration (the agent starts with it) and the
 * notices to show on stderr (which source won where config.yaml and the environment disagree). Throws `UsageError`
 * for a bad `--mode`/`--model`, `PreflightError` for an unusable configuration.
 */
export async function preflight(
  options: RunOptions,
  env: NodeJS.ProcessEnv,
): Promise<{ config: AgentConfig; notices: string[] }> {
  if (options.mode !== undefined && !MODES.some((m) => m.id === options.mode)) {
    throw new UsageError(`unknown mode "${options.mode}" (available: ${MODES.map((m) => m.id).join(", ")})`);
  }
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) throw new PreflightError(error.message);
    throw error;
  }
  const adopted = await adoptSingleModel(config, env, options.model);
  if (options.model !== undefined && config.models.length > 0 && !findModel(config, options.model)) {
    throw new UsageError(
      `unknown model "${options.model}" (available: ${config.models.map((m) => m.name).join(", ")})`,
    );
  }
  // A continued session keeps the model it was stored with; it is checked when the prompt runs.
  if (options.session === undefined) {
    const problem = providerProblem(config, options.model ?? config.model);
    if (problem) throw new PreflightError(problem);
    const provider = config.providers[findModel(config, options.model ?? config.model)?.provider ?? ""];
    const signedOut = provider && signedOutText(provider);
    if (signedOut) throw new PreflightError(signedOut);
  }
  return { config, notices: adopted ? [...config.notices, adopted] : config.notices };
}
