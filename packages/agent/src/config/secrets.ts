import { clientSecrets } from "@crow/core/redact";
import type { AgentConfig } from "./types.js";

/**
 * Every secret the configuration holds: each provider's API key and credential headers, and the embeddings key.
 * What messages must never show (redaction) and what child processes must never get (see tools/child-env.ts).
 */
export function configuredSecrets(config: Pick<AgentConfig, "providers" | "skills">): string[] {
  const secrets = Object.values(config.providers).flatMap((p) => clientSecrets(p.apiKey, p.headers));
  const embeddingsKey = config.skills.embeddings?.apiKey;
  if (embeddingsKey) secrets.push(embeddingsKey);
  return [...new Set(secrets)];
}
