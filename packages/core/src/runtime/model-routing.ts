/**
 * The runtime's LLM client: each request goes to the provider its model names (an extension's `registerProvider`),
 * else to the host's client (`RuntimeOptions.llm`), with the model's provider id in place of its name.
 */

import type { ModelInfo } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { ProviderFactory } from "../extensions/api.js";
import type { LlmClient, LlmResult } from "../llm/types.js";

function failed(message: string): LlmResult {
  return {
    ok: false,
    error: { kind: "invalid_response", message, retryable: false, attempts: 0 },
    partial: { content: "", reasoning: "" },
  };
}

/**
 * Routes each request by model: an extension provider when the model names one, else `llm`. Undefined when there
 * is neither a host client nor a provider (sessions then cannot prompt). A provider's client is made on first use.
 */
export function modelRouter(
  llm: LlmClient | undefined,
  models: readonly ModelInfo[],
  providers: ReadonlyMap<string, { value: ProviderFactory }>,
): LlmClient | undefined {
  if (!llm && providers.size === 0) return undefined;
  const providerClients = new Map<string, LlmClient>();
  const providerClient = (name: string, factory: ProviderFactory): LlmClient => {
    let client = providerClients.get(name);
    if (!client) {
      client = factory({ name, options: {} });
      providerClients.set(name, client);
    }
    return client;
  };
  return {
    async stream(request, streamOptions) {
      const info = models.find((m) => m.name === request.model);
      const provider = info?.provider ? providers.get(info.provider) : undefined;
      const routed = { ...request, model: info?.id ?? request.model };
      try {
        if (provider) return await providerClient(info?.provider ?? "", provider.value).stream(routed, streamOptions);
      } catch (error) {
        return failed(`provider "${info?.provider}" failed: ${errorText(error)}`);
      }
      if (!llm) return failed(`no LLM provider serves model "${request.model}"`);
      return llm.stream(routed, streamOptions);
    },
  };
}
