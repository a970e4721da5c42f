/**
 * Provider failures explained for the user: what failed (the provider's name, URL, model and status), what to try,
 * and which variable or config key to change. The LLM client reports the failure's kind and codes; only this layer
 * knows where the provider's settings came from. Never shows an API key.
 */
import type { LlmError } from "@crow/core";
import { ENV_PROVIDER } from "./env.js";
import { nearest } from "./errors.js";
import { listModels } from "./list-models.js";
import { signedOutText } from "./saved-keys.js";
import type { ModelConfig, ProviderConfig } from "./types.js";

/** How long the `/models` look-up behind an unknown-model message may take. */
const MODELS_TIMEOUT_MS = 3_000;

/** The phrase for a system error code of an unreachable server. */
const UNREACHABLE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ENOTFOUND: "the host name does not resolve",
  EAI_NONAME: "the host name does not resolve",
  EAI_AGAIN: "the host name could not be resolved (DNS)",
  EHOSTUNREACH: "the host is unreachable",
  ENETUNREACH: "the network is unreachable",
  ECONNRESET: "the connection was reset",
};

/** Short phrases for the spinner and retry notices (`retrying 2/4: connection refused`). */
export function shortReason(error: LlmError): string {
  if (error.code && UNREACHABLE[error.code]) return UNREACHABLE[error.code] as string;
  if (error.kind === "timeout") return "timed out";
  if (error.status !== undefined) return `HTTP ${error.status}`;
  return error.message.split("\n")[0] ?? error.kind;
}

function attemptsNote(error: LlmError): string {
  return error.attempts > 1 ? ` (${error.attempts} attempts)` : "";
}

function status(error: LlmError): string {
  return error.status === undefined ? "" : `HTTP ${error.status}: `;
}

/** Where to change the model id: `CROW_MODEL`, or the model's entry in config.yaml. */
function modelSetting(model: ModelConfig, provider: ProviderConfig): string {
  if (provider.name === ENV_PROVIDER) return "set CROW_MODEL (or run crow init)";
  const file = provider.urlFrom?.split(" in ").at(-1) ?? "config.yaml";
  return `change models.${model.name}.model in ${file}`;
}

/**
 * The message for a failed request to `provider` for `model`. Network, TLS, auth, unknown-model and 404 failures
 * get a cause and a next step; an unknown model also lists the provider's close model names when its `/models`
 * answers. Other failures keep the provider's message, prefixed with the provider and status.
 */
export async function explainProviderError(
  error: LlmError,
  provider: ProviderConfig,
  model: ModelConfig,
): Promise<string> {
  const who = `LLM provider "${provider.name}" at ${provider.baseURL}`;
  const urlFrom = provider.urlFrom ? ` (the URL comes from ${provider.urlFrom})` : "";
  switch (error.kind) {
    case "network": {
      const reason = error.code ? UNREACHABLE[error.code] : undefined;
      if (error.code === "ECONNREFUSED") {
        return `Cannot reach ${who}: connection refused. Is the server running?${urlFrom}`;
      }
      if (reason) return `Cannot reach ${who}: ${reason}${attemptsNote(error)}. Check the URL${urlFrom}.`;
      return `Lost the connection to ${who}${attemptsNote(error)}: ${error.message}${urlFrom}`;
    }
    case "timeout":
      return `${who} did not answer in time${attemptsNote(error)}: ${error.message}${urlFrom}`;
    case "tls":
      return (
        `TLS connection to ${who} failed: ${error.message}${error.code ? ` (${error.code})` : ""}. ` +
        "For a self-signed or private certificate, give Node its CA with NODE_EXTRA_CA_CERTS=/path/to/ca.pem; " +
        `a local server without TLS needs an http:// URL${urlFrom}.`
      );
    case "auth": {
      const verb = error.status === 403 ? "denied the request" : "rejected the API key";
      const key =
        signedOutText(provider) ??
        (provider.apiKey
          ? `The key comes from ${provider.keyFrom ?? "the configuration"} (not shown): check that it is valid for this provider${error.status === 403 ? " and allowed to use this model" : ""}.`
          : provider.name === ENV_PROVIDER
            ? "No API key is set: set OPENAI_API_KEY (or run crow init)."
            : `No API key is configured for it: add api_key under providers.${provider.name} (or run crow init).`);
      return `${who} ${verb} (${status(error)}${error.message}). ${key}`;
    }
    case "unknown_model": {
      const offered = await listModels(provider.baseURL, provider.apiKey, MODELS_TIMEOUT_MS);
      let names = "";
      if (offered.ok && offered.ids.length > 0) {
        const close = nearest(model.id, offered.ids);
        names =
          close.length > 0
            ? ` Close names it offers: ${close.join(", ")}.`
            : ` It offers: ${offered.ids.slice(0, 10).join(", ")}${offered.ids.length > 10 ? ", …" : ""}.`;
      }
      return `${who} does not know the model "${model.id}" (${status(error)}${error.message}).${names} To use another, ${modelSetting(model, provider)}.`;
    }
    case "http":
      if (error.status === 404) {
        return (
          `${who} answered ${status(error)}${error.message} for ${provider.baseURL}/chat/completions. ` +
          `Is the base URL right? OpenAI-compatible servers usually end in /v1${urlFrom}.`
        );
      }
      return `${who} failed${attemptsNote(error)}: ${status(error)}${error.message}`;
    default:
      return `${who}: ${error.message}`;
  }
}
