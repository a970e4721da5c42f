/** Reading task.toml's values (suite.ts, steps.ts): tables, timeouts and `env` tables, with errors naming the field. */
import { resolveEnvTemplates } from "./task-schema.js";
import type { TomlTable, TomlValue } from "./toml.js";

/** A suite or task that cannot be used; the message says which file and what to do. */
export class SuiteError extends Error {
  override name = "SuiteError";
}

/** `value` when it is a table, else an empty one. */
export function table(value: TomlValue | undefined): TomlTable {
  return value !== undefined && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date)
    ? value
    : {};
}

/** A positive number of seconds, `fallback` when unset. */
export function seconds(value: TomlValue | undefined, fallback: number, where: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !(value > 0)) throw new SuiteError(`${where} must be a positive number of seconds`);
  return value;
}

/** An `env` table of task.toml, its `${NAME}` / `${NAME:-default}` values resolved as Harbor does. */
export function stringTable(value: TomlValue | undefined, where: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, entry] of Object.entries(table(value))) {
    if (typeof entry === "object" && !(entry instanceof Date))
      throw new SuiteError(`${where}.${key} must be a string, number or boolean`);
    env[key] = String(entry);
  }
  return resolveEnvTemplates(
    env,
    process.env,
    (name, key) =>
      new SuiteError(
        `${where}.${key} is \${${name}}, but ${name} is not set in crow eval's environment: export it, or give a ` +
          `default as \${${name}:-value}`,
      ),
  );
}
