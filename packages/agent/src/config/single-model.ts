/**
 * `OPENAI_BASE_URL` alone (no `CROW_MODEL`, no models in config.yaml): when the endpoint's `GET /models` lists
 * exactly one model, that is the model, and a one-line notice says so. Anything else (no answer, several models)
 * leaves the configuration as it was, and "No model configured" explains what to set.
 */

import { ENV_PROVIDER, envModels } from "./env.js";
import { listModels } from "./list-models.js";
import type { AgentConfig } from "./types.js";

/** How long the one `/models` request may take before the question is given up (a local server answers at once). */
const LIST_TIMEOUT_MS = 5000;

/**
 * Adopts the endpoint's only model when `config` has the environment's provider and no model. Mutates `config`
 * (models, model) and returns the notice to print, or undefined when nothing changed.
 */
export async function adoptSingleModel(
  config: AgentConfig,
  env: NodeJS.ProcessEnv = process.env,
): Promise<string | undefined> {
  const provider = config.providers[ENV_PROVIDER];
  if (!provider || config.models.length > 0 || config.model !== undefined) return undefined;
  const listed = await listModels(provider.baseURL, provider.apiKey, LIST_TIMEOUT_MS);
  if (!listed.ok || listed.ids.length !== 1) return undefined;
  const [id] = listed.ids as [string];
  // The window as CROW_CONTEXT_WINDOW gave it (or the default), like any model of the environment.
  const given = Boolean(env.CROW_CONTEXT_WINDOW?.trim() || config.dotenv.CROW_CONTEXT_WINDOW?.trim());
  const [model] = envModels({ CROW_MODEL: id }, config.contextWindow, !given);
  if (!model) return undefined;
  config.models.push(model);
  config.model = model.name;
  return `model "${id}": the only model at ${provider.baseURL} (set CROW_MODEL to choose another)`;
}
