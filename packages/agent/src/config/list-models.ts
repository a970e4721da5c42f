/** `GET {baseURL}/models` on an OpenAI-compatible provider: the model ids it offers, for `crow init` to pick from. */
// The dependency-free subpath: crow init and the provider error messages must not load the runtime.
import { errorText } from "@crow/core";
import { redactSecrets } from "@crow/core/redact";

export type ModelList = { ok: true; ids: string[] } | { ok: false; error: string };

/**
 * Lists the provider's models (OpenAI's `{data: [{id}]}` shape). Never throws: a failure says why (HTTP status and
 * the provider's message, or the network error), and never includes the key.
 */
export async function listModels(baseURL: string, apiKey: string | undefined, timeoutMs = 15_000): Promise<ModelList> {
  const url = `${baseURL.replace(/\/+$/, "")}/models`;
  let response: Response;
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    response = await fetch(url, {
      headers: { accept: "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
      signal,
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    const reason = signal.aborted
      ? `no answer within ${timeoutMs / 1000} s`
      : (cause?.code ?? cause?.message ?? errorText(error));
    return { ok: false, error: `cannot reach ${url}: ${reason}` };
  }
  const text = await response.text().catch(() => "");
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const message = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
    // The provider's message may echo the key it was sent.
    const shown = typeof message === "string" ? `: ${redactSecrets(message, [apiKey])}` : "";
    return { ok: false, error: `GET ${url} answered HTTP ${response.status}${shown}` };
  }
  const data = (body as { data?: unknown } | undefined)?.data;
  if (!Array.isArray(data)) return { ok: false, error: `GET ${url} did not return a model list` };
  const ids = data
    .map((entry) => (entry as { id?: unknown }).id)
    .filter((id): id is string => typeof id === "string" && id !== "");
  return { ok: true, ids };
}
