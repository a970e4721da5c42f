/**
 * The environment of the processes Crow starts (the terminal's shell, stdio MCP servers, the built-in crow-mcp):
 * secrets stay out unless the user passes them. One policy, used by both sides: crow for every process it spawns,
 * crow-mcp for its shell (so a crow-mcp started by any MCP client keeps secrets out of its shell too).
 * Dependency-free: the agent imports it as `@crow/mcp/child-env`.
 *
 * A variable is left out when
 * 1. its name looks secret ({@link isSecretName}: `OPENAI_API_KEY`, `GH_TOKEN`, `PGPASSWORD`, `AWS_SECRET_ACCESS_KEY`…),
 * 2. it is one of `drop` (crow: what only Crow's `.env` set),
 * 3. its value is a secret: one of `secretValues` (crow: the configured provider keys) or the value of a variable
 *    left out by 1 (`MY_ALIAS=$OPENAI_API_KEY`), for values of at least {@link MIN_SECRET_VALUE_LENGTH} characters;
 * unless its name is allowed (`allow`: names, `*` globs): an allowed variable always passes.
 * `CROW_CHILD_ENV_ALLOW` and `CROW_CHILD_ENV_DROP` in the environment (comma-separated names) add to `allow` and
 * `drop` and are never passed on: that is how crow hands its `child_env.allow` and its `.env` names to crow-mcp.
 * Everything else passes (PATH, HOME, LANG, proxies, tool settings): a secret in a variable with an innocent name
 * and value (a password inside a `DATABASE_URL`) is not recognised; allow- and deny-listing by name is the contract.
 */

/** Comma-separated names (or globs) allowed through, whatever they look like. */
export const CHILD_ENV_ALLOW = "CROW_CHILD_ENV_ALLOW";
/** Comma-separated names never passed on. */
export const CHILD_ENV_DROP = "CROW_CHILD_ENV_DROP";

/** Shorter values are not compared: `1`, `true` or `main` are no one's secret, and many variables hold them. */
export const MIN_SECRET_VALUE_LENGTH = 8;

export interface ChildEnvPolicy {
  /** Names, or globs with `*`, passed whatever the other rules say. */
  allow?: readonly string[];
  /** Names left out (unless allowed). */
  drop?: readonly string[];
  /** Values left out wherever they appear as a whole value (unless the name is allowed). */
  secretValues?: readonly string[];
}

/** Name parts that make a name secret on their own: `API_KEY`, `GH_TOKEN`, `DB_PASS`, `AWS_SECRET_ACCESS_KEY`. */
const SECRET_WORDS = new Set([
  "KEY",
  "KEYS",
  "APIKEY",
  "SECRET",
  "SECRETS",
  "TOKEN",
  "TOKENS",
  "PASSWORD",
  "PASSWORDS",
  "PASSWD",
  "PASS",
  "PASSPHRASE",
  "CREDENTIAL",
  "CREDENTIALS",
  "CREDS",
  "PRIVATE",
  "AUTH",
  "COOKIE",
  "PAT",
]);

/** Endings of a name part that make it secret: `PGPASSWORD`, `AUTHTOKEN` (`npm_config__authToken`), `OPENAIAPIKEY`. */
const SECRET_ENDINGS = ["TOKEN", "SECRET", "PASSWORD", "PASSWD", "APIKEY", "CREDENTIALS"];

/**
 * Names that match the patterns but hold no secret, and that tools need: the ssh agent's socket (what lets `git`
 * over ssh work, without the key itself ever being in the environment).
 */
const NOT_SECRET = new Set(["SSH_AUTH_SOCK"]);

/**
 * Whether a variable's name says it holds a secret: a part of the name (split at `_`, `-`, `.` and other
 * non-alphanumerics, case-insensitive) is one of KEY(S), APIKEY, SECRET(S), TOKEN(S), PASSWORD(S), PASSWD, PASS,
 * PASSPHRASE, CREDENTIAL(S), CREDS, PRIVATE, AUTH, COOKIE, PAT (and PWD in a longer name: `MYSQL_PWD`), or ends in
 * TOKEN, SECRET, PASSWORD, PASSWD, APIKEY or CREDENTIALS. Whole parts, so `KEYBOARD`, `TOKENIZERS_PARALLELISM`,
 * `GIT_ASKPASS`, `PWD` and `XAUTHORITY` are not secret; `SSH_AUTH_SOCK` is an exception (a socket path).
 */
export function isSecretName(name: string): boolean {
  const upper = name.toUpperCase();
  if (NOT_SECRET.has(upper)) return false;
  const parts = upper.split(/[^A-Z0-9]+/);
  return parts.some(
    (part) =>
      SECRET_WORDS.has(part) ||
      // `MYSQL_PWD` is a password; `PWD` alone is the working directory.
      (part === "PWD" && parts.length > 1) ||
      SECRET_ENDINGS.some((ending) => part.endsWith(ending)),
  );
}

/** The names of a comma-separated list (spaces around names ignored, empty entries dropped). */
export function nameList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

/** Whether `name` is one of `patterns` (exact names, or globs where `*` is any run of characters). */
export function nameMatches(name: string, patterns: readonly string[]): boolean {
  return patterns.some((pattern) => {
    if (!pattern.includes("*")) return pattern === name;
    const source = pattern
      .split("*")
      .map((piece) => piece.replace(/[.+?^${}()|[\]\\]/g, "\\$&"))
      .join(".*");
    return new RegExp(`^${source}$`).test(name);
  });
}

/** `base` as a child process may see it under `policy` (and the lists `base` itself carries); see the file comment. */
export function childEnvironment(
  base: Readonly<Record<string, string | undefined>>,
  policy: ChildEnvPolicy = {},
): Record<string, string> {
  const allow = [...(policy.allow ?? []), ...nameList(base[CHILD_ENV_ALLOW])];
  const drop = new Set([...(policy.drop ?? []), ...nameList(base[CHILD_ENV_DROP])]);
  const secretValues = new Set((policy.secretValues ?? []).filter((value) => value.length >= MIN_SECRET_VALUE_LENGTH));
  for (const [name, value] of Object.entries(base)) {
    if (value !== undefined && value.length >= MIN_SECRET_VALUE_LENGTH && isSecretName(name)) secretValues.add(value);
  }
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(base)) {
    if (value === undefined || name === CHILD_ENV_ALLOW || name === CHILD_ENV_DROP) continue;
    const hidden = drop.has(name) || isSecretName(name) || secretValues.has(value);
    if (!hidden || nameMatches(name, allow)) out[name] = value;
  }
  return out;
}
