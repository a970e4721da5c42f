/**
 * Keeping configured secrets out of text that is shown or stored: a provider may echo the API key it was sent in an
 * error body ("invalid key sk-…"), and that body becomes the message the user sees and the session keeps.
 */

/** What stands in for a secret. */
export const REDACTED = "[redacted]";

/**
 * Values shorter than this are not treated as secrets: a placeholder such as "none" or "local" sent to a server that
 * needs no key would otherwise blank out ordinary words of every message.
 */
export const MIN_SECRET_LENGTH = 8;

/** `text` with every occurrence of each secret (of at least {@link MIN_SECRET_LENGTH} characters) replaced. */
export function redactSecrets(text: string, secrets: readonly (string | undefined)[]): string {
  let out = text;
  // Longest first: a key that contains another must be replaced whole.
  const wanted = [...new Set(secrets)]
    .filter((secret): secret is string => secret !== undefined && secret.trim().length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  for (const secret of wanted) out = out.split(secret).join(REDACTED);
  return out;
}

/** Header names whose values are credentials (`Authorization`, `X-Api-Key`, `X-Auth-Token`…). */
const CREDENTIAL_HEADER = /auth|key|token|secret|password|cookie/i;

/**
 * The secrets of a client's settings: its API key and the values of its credential headers (a `Bearer …`
 * or `Basic …` value also without its scheme).
 */
export function clientSecrets(apiKey: string | undefined, headers: Readonly<Record<string, string>> = {}): string[] {
  const secrets = apiKey ? [apiKey] : [];
  for (const [name, value] of Object.entries(headers)) {
    if (!CREDENTIAL_HEADER.test(name)) continue;
    secrets.push(value);
    const credential = /^\s*(?:bearer|basic|token)\s+(\S.*)$/i.exec(value)?.[1];
    if (credential) secrets.push(credential.trim());
  }
  return secrets;
}
