/**
 * Which fields of Harbor's task.toml (schema 1.0 of Terminal-Bench 2.0 through the current 1.x) `crow eval` applies,
 * and which it reads but cannot apply here — those are reported per task when a run starts, never dropped silently.
 *
 * Applied: `[agent] timeout_sec`, `[verifier] timeout_sec` and `env`, `[solution] env`, `[environment] allow_internet`,
 * `env` and `build_timeout_sec` (the Dockerfile steps at setup). Informational: `version` / `schema_version`,
 * `source`, `[task]` (name, description, `authors` / `[[task.authors]]`, keywords) and `[metadata]`.
 */
import type { TomlTable, TomlValue } from "./toml.js";

/** Per table, the keys that are applied or purely informational. */
const KNOWN: Record<string, readonly string[] | "any"> = {
  "": ["version", "schema_version", "source", "task", "metadata", "agent", "verifier", "solution", "environment"],
  task: "any",
  metadata: "any",
  agent: ["timeout_sec"],
  verifier: ["timeout_sec", "env"],
  solution: ["env"],
  environment: ["allow_internet", "env", "build_timeout_sec", "docker_image"],
};

function isTable(value: TomlValue | undefined): value is TomlTable {
  return value !== undefined && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * The dotted names of the fields of `toml` that have no effect here (`environment.cpus`, `verifier.user`, `steps`…),
 * in file order.
 */
export function ignoredFields(toml: TomlTable): string[] {
  const ignored: string[] = [];
  for (const [key, value] of Object.entries(toml)) {
    if (!KNOWN[""]?.includes(key)) {
      ignored.push(key);
      continue;
    }
    const known = KNOWN[key];
    if (known === undefined || known === "any" || !isTable(value)) continue;
    for (const field of Object.keys(value)) if (!known.includes(field)) ignored.push(`${key}.${field}`);
  }
  return ignored;
}

/** A value that is a whole `${NAME}` or `${NAME:-default}` (Harbor resolves only those; anything else is literal). */
const TEMPLATE = /^\$\{([A-Za-z_]\w*)(?::-(.*))?\}$/s;

/**
 * The `env` tables' values as Harbor resolves them: a value that is exactly `${NAME}` takes `NAME` from the
 * environment crow eval runs in, `${NAME:-default}` falls back to `default`; other values are taken literally.
 * Crow's own variables (`OPENAI_*`, `CROW_*`: the provider's key and endpoint) are the agent's business and read as
 * unset. Throws `missing(name, key)`'s error when a `${NAME}` without default is unset, as Harbor refuses the trial.
 */
export function resolveEnvTemplates(
  table: Readonly<Record<string, string>>,
  env: NodeJS.ProcessEnv,
  missing: (name: string, key: string) => Error,
): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const [key, value] of Object.entries(table)) {
    const match = TEMPLATE.exec(value);
    if (!match) {
      resolved[key] = value;
      continue;
    }
    const name = match[1] ?? "";
    const own = name.startsWith("OPENAI_") || name.startsWith("CROW_");
    const found = own ? undefined : env[name];
    if (found !== undefined) resolved[key] = found;
    else if (match[2] !== undefined) resolved[key] = match[2];
    else throw missing(name, key);
  }
  return resolved;
}
