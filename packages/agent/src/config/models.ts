/**
 * Models at run time: which model a name means, whether it can be reached, its context window, compaction threshold
 * and price, and an `LlmClient` that routes each request to the model's provider (one client per provider, created
 * on first use), so switching the model select also switches base URL and key.
 */
import type { LlmClient, LlmClientOptions, LlmRequest, LlmResult, Usage } from "@crow/core";
import { redactSecrets } from "@crow/core/redact";
import { ENV_PROVIDER } from "./env.js";
import { explainProviderError } from "./provider-errors.js";
import { configuredSecrets } from "./secrets.js";
import type { AgentConfig, ModelConfig, Price, ProviderConfig } from "./types.js";

/** The model of a select value (its name), or of a provider model id as a fallback. */
export function findModel(config: AgentConfig, name: string | undefined): ModelConfig | undefined {
  if (name === undefined) return undefined;
  return config.models.find((m) => m.name === name) ?? config.models.find((m) => m.id === name);
}

const NO_PROVIDER =
  "No LLM provider configured: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1) and, if it needs one, OPENAI_API_KEY, or run crow init.";

/** Why a prompt cannot reach `model` with this configuration, or undefined when it can. */
export function providerProblem(config: AgentConfig, model: string | undefined): string | undefined {
  if (Object.keys(config.providers).length === 0) return NO_PROVIDER;
  if (model === undefined || config.models.length === 0) {
    if (config.noModelBecause) return config.noModelBecause;
    return config.file
      ? `No model configured: add one under models: in ${config.file} (or run crow init), or set CROW_MODEL.`
      : "No model configured: set CROW_MODEL (or CROW_MODELS, a comma-separated list), or run crow init.";
  }
  const found = findModel(config, model);
  if (!found) {
    return `Model "${model}" is not configured (known: ${config.models.map((m) => m.name).join(", ")}).`;
  }
  if (!config.providers[found.provider]) {
    return found.provider === ENV_PROVIDER
      ? NO_PROVIDER
      : `Model "${model}" uses provider "${found.provider}", which is not configured.`;
  }
  return undefined;
}

/** The context window of `model` (the configured default for unknown models). */
export function contextWindowOf(config: AgentConfig, model: string | undefined): number {
  return findModel(config, model)?.contextWindow ?? config.contextWindow;
}

/** Cost of one response's usage at `price` (per million tokens). */
export function usageCost(price: Price, usage: Usage): number {
  const cached = Math.min(usage.cachedTokens ?? 0, usage.promptTokens);
  const fresh = usage.promptTokens - cached;
  return (
    (fresh * price.input + cached * (price.cachedInput ?? price.input) + usage.completionTokens * price.output) / 1e6
  );
}

/** Makes the client of one provider (core's `createLlmClient`, injected so this module loads without the runtime). */
export type LlmFactory = (options: LlmClientOptions) => LlmClient;

/**
 * An `LlmClient` over every configured provider: a request's `model` is a model name (the session's select value);
 * it goes to that model's provider with the provider's model id. Provider clients are created on first use and
 * cached. An unknown model or provider is a failed result with a clear message (the contract: never throw); a
 * provider's failure is explained with the provider's settings (see provider-errors.ts).
 */
export function createModelRouter(config: AgentConfig, factory: LlmFactory): LlmClient {
  const clients = new Map<string, LlmClient>();
  const secrets = configuredSecrets(config);
  const clientOf = (provider: ProviderConfig): LlmClient => {
    let client = clients.get(provider.name);
    if (!client) {
      client = factory({
        baseURL: provider.baseURL,
        retry: config.retry,
        ...(provider.apiKey ? { apiKey: provider.apiKey } : {}),
        ...(provider.headers ? { headers: provider.headers } : {}),
      });
      clients.set(provider.name, client);
    }
    return client;
  };
  return {
    async stream(request, options): Promise<LlmResult> {
      const model = findModel(config, request.model);
      const provider = model ? config.providers[model.provider] : undefined;
      if (!model || !provider) {
        const message = providerProblem(config, request.model) ?? `no provider for model "${request.model}"`;
        return {
          ok: false,
          error: { kind: "invalid_response", message, retryable: false, attempts: 0 },
          partial: { content: "", reasoning: "" },
        };
      }
      const result = await clientOf(provider).stream(withLimitsOf(model, { ...request, model: model.id }), options);
      if (result.ok || result.error.kind === "aborted" || result.error.kind === "context_length_exceeded")
        return result;
      // The message the user sees (crow run, the editor): what failed, where the setting came from, what to try.
      // Never a key, whichever provider's (the client already hides its own; this covers every configured one).
      const message = redactSecrets(await explainProviderError(result.error, provider, model), secrets);
      return { ...result, error: { ...result.error, message } };
    },
  };
}

/**
 * The request as `model` takes it: its configured `max_tokens` (unless the request sets its own), and the session's
 * `reasoning_effort` as {@link withEffortOf} lets it through.
 */
function withLimitsOf(model: ModelConfig, request: LlmRequest): LlmRequest {
  const limited =
    model.maxTokens === undefined || request.params?.max_tokens !== undefined
      ? request
      : { ...request, params: { ...request.params, max_tokens: model.maxTokens } };
  return withEffortOf(model, limited);
}

/**
 * The session's `reasoning_effort` (core puts it in `params.extra`; nothing else in the agent sets it) is dropped for
 * a model not configured with that level. A session keeps its choice across model switches, so it applies again when
 * the session switches back to a model that has it; providers reject the field, or an unknown level, on models that
 * do not reason.
 */
function withEffortOf(model: ModelConfig, request: LlmRequest): LlmRequest {
  const extra = request.params?.extra;
  if (!extra || !("reasoning_effort" in extra)) return request;
  if (model.reasoningEfforts?.includes(String(extra.reasoning_effort))) return request;
  const { reasoning_effort: _dropped, ...rest } = extra;
  return { ...request, params: { ...request.params, extra: rest } };
}

/** Cumulative session cost, per currency: usage_update's `cost` is the total in the current model's currency. */
export class CostMeter {
  private readonly totals = new Map<string, number>();

  /** Adds one response's usage at `model`'s price; the new total, or undefined when the model has no price. */
  add(model: ModelConfig | undefined, usage: Usage): { amount: number; currency: string } | undefined {
    if (!model?.price) return undefined;
    const { currency } = model.price;
    const amount = (this.totals.get(currency) ?? 0) + usageCost(model.price, usage);
    this.totals.set(currency, amount);
    return { amount, currency };
  }
}
