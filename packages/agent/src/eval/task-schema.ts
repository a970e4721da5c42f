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
