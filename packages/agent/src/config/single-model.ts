/**
 * `OPENAI_BASE_URL` alone (no `CROW_MODEL`, no models in config.yaml): when the endpoint's `GET /models` lists
 * exactly one model, that is the model, and a one-line notice says so. Anything else (no answer, several models)
 * leaves the models as they were and records why (`noModelBecause`: "cannot reach …", the models it offers), which
 * the "no model" message then says. A model named on the command line (`crow run --model`) is taken as
 * `CROW_MODEL` would be, once the endpoint's listing (when it has one) shows it: else `noModelBecause` names the
 * models it offers.
 */

import { ENV_PROVIDER, envModels } from "./env.js";
import { listModels } from "./list-models.js";
import type { AgentConfig } from "./types.js";

/** How long the one `/models` request may take before the question is given up (a local server answers at once). */
const LIST_TIMEOUT_MS = 5000;

/** How many of an endpoint's models a message names. */
const NAMED = 8;

/** The first {@link NAMED} of `ids`, then "…" for the rest. */
function named(ids: readonly string[]): string {
  return ids.slice(0, NAMED).join(", ") + (ids.length > NAMED ? ", …" : "");
}

/**
 * Adopts the endpoint's only model (or `requested`, the model the command line names) when `config` has the
 * environment's provider and no model. Mutates `config` (models, model, or `noModelBecause`) and returns the notice
 * to print, or undefined when no model was inferred.
 */
export async function adoptSingleModel(
  config: AgentConfig,
  env: NodeJS.ProcessEnv = process.env,
  requested?: string,
): Promise<string | undefined> {
  const provider = config.providers[ENV_PROVIDER];
  if (!provider || config.models.length > 0 || config.model !== undefined) return undefined;
  const adopt = (id: string) => {
    // The window as CROW_CONTEXT_WINDOW gave it (or the default), like any model of the environment.
    const given = Boolean(env.CROW_CONTEXT_WINDOW?.trim() || config.dotenv.CROW_CONTEXT_WINDOW?.trim());
    const [model] = envModels({ CROW_MODEL: id }, config.contextWindow, !given);
    if (!model) return false;
    config.models.push(model);
    config.model = model.name;
    return true;
  };
  const listed = await listModels(provider.baseURL, provider.apiKey, LIST_TIMEOUT_MS);
  if (requested !== undefined) {
    // Checked against what the endpoint lists, when it lists anything: a typo is said now, with the choices, not
    // as the provider's 404 after the session opened. An endpoint without a listing takes the name as given.
    if (listed.ok && listed.ids.length > 0 && !listed.ids.includes(requested)) {
      config.noModelBecause =
        `Unknown model "${requested}": ${provider.baseURL} offers ${listed.ids.length} ` +
        `model${listed.ids.length === 1 ? "" : "s"} (${named(listed.ids)}); pass one of them to --model.`;
      return undefined;
    }
    adopt(requested);
    return undefined;
  }
  if (!listed.ok) {
    const error = listed.error.charAt(0).toUpperCase() + listed.error.slice(1);
    config.noModelBecause =
      `${error} (asked which model to use, as CROW_MODEL is not set): start the server or correct ` +
      "OPENAI_BASE_URL, or set CROW_MODEL.";
    return undefined;
  }
  if (listed.ids.length !== 1) {
    const names = named(listed.ids);
    config.noModelBecause =
      listed.ids.length === 0
        ? `No model configured: ${provider.baseURL} lists no models; set CROW_MODEL to the model to use.`
        : `No model chosen: ${provider.baseURL} offers ${listed.ids.length} models (${names}); set CROW_MODEL ` +
          "to one of them, or pass --model.";
    return undefined;
  }
  const [id] = listed.ids as [string];
  if (!adopt(id)) return undefined;
  return `model "${id}": the only model at ${provider.baseURL} (set CROW_MODEL to choose another)`;
}
