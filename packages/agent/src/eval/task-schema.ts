/**
 * Which fields of Harbor's task.toml (schema 1.0 of Terminal-Bench 2.0 through 1.4) `crow eval` applies, and which
 * it reads but cannot apply here — those are reported per task when a run starts, never dropped silently.
 *
 * Applied: `[agent] timeout_sec`, `[verifier] timeout_sec` and `env`, `[solution] env`, `[environment]` `env` and
 * `build_timeout_sec` (the Dockerfile steps at setup); the network: `network_mode` of `[environment]` (the baseline),
 * `[agent]` (the agent's and the oracle's phase) and `[verifier]`, or the older `[environment] allow_internet`;
 * `[[steps]]` and `multi_step_reward_strategy` (steps.ts); `artifacts` (artifacts.ts); `[[verifier.collect]]`
 * (hooks.ts); `[verifier] environment_mode` and `[verifier.environment]` (verifier-env.ts). Informational: `version` /
 * `schema_version`, `source`, `[task]` (name, description, `authors`, keywords) and `[metadata]`. Removed keys
 * (`multi_step_reward_mode`, gone in 1.3) are named with what replaced them.
 */
import type { TomlTable, TomlValue } from "./toml.js";

/** Per table, the keys that are applied or purely informational. */
const KNOWN: Record<string, readonly string[] | "any"> = {
  "": [
    "version",
    "schema_version",
    "source",
    "task",
    "metadata",
    "agent",
    "verifier",
    "solution",
    "environment",
    "steps",
    "multi_step_reward_strategy",
    "artifacts",
  ],
  task: "any",
  metadata: "any",
  agent: ["timeout_sec", "network_mode"],
  verifier: ["timeout_sec", "env", "network_mode", "collect", "environment_mode", "environment"],
  solution: ["env"],
  environment: ["allow_internet", "network_mode", "env", "build_timeout_sec", "docker_image"],
};

/** The keys of one `[[steps]]` entry that are applied (steps.ts); `agent` and `verifier` are tables. */
const STEP_KNOWN: Record<string, readonly string[] | "any"> = {
  "": ["name", "min_reward", "agent", "verifier"],
  agent: ["timeout_sec"],
  verifier: ["timeout_sec", "env", "collect", "environment_mode", "environment"],
};

/** Keys Harbor's schema removed, and what to write instead: said, not silently ignored. */
export const REMOVED: Readonly<Record<string, string>> = {
  multi_step_reward_mode:
    "multi_step_reward_mode was removed in task schema 1.3 (Harbor drops it): write " +
    'multi_step_reward_strategy = "mean" (the default) or "final"',
};

function isTable(value: TomlValue | undefined): value is TomlTable {
  return value !== undefined && typeof value === "object" && !Array.isArray(value) && !(value instanceof Date);
}

function unknownIn(
  toml: TomlTable,
  known: Record<string, readonly string[] | "any">,
  prefix: string,
  ignored: string[],
): void {
  for (const [key, value] of Object.entries(toml)) {
    if (prefix === "" && key in REMOVED) continue;
    if (!known[""]?.includes(key)) {
      ignored.push(`${prefix}${key}`);
      continue;
    }
    const fields = known[key];
    if (fields === undefined || fields === "any" || !isTable(value)) continue;
    for (const field of Object.keys(value)) if (!fields.includes(field)) ignored.push(`${prefix}${key}.${field}`);
  }
}

/**
 * The dotted names of the fields of `toml` that have no effect here (`environment.cpus`, `verifier.user`,
 * `steps[0].agent.user`…), in file order; removed keys are not among them ({@link removedFields}).
 */
export function ignoredFields(toml: TomlTable): string[] {
  const ignored: string[] = [];
  unknownIn(toml, KNOWN, "", ignored);
  const steps = toml.steps;
  if (Array.isArray(steps)) {
    steps.forEach((step, index) => {
      if (isTable(step)) unknownIn(step, STEP_KNOWN, `steps[${index}].`, ignored);
    });
  }
  return ignored;
}

/** What to say about each removed key `toml` still has. */
export function removedFields(toml: TomlTable): string[] {
  return Object.keys(toml)
    .filter((key) => key in REMOVED)
    .map((key) => REMOVED[key] ?? key);
}

const NETWORK_MODES = ["public", "no-network", "allowlist"] as const;

/**
 * Whether a phase gets the network by its table's `network_mode`: `public`; `no-network`; `allowlist`, which a trial
 * cannot narrow to hosts, so no network (its `allowed_hosts` is reported as not applied). Unset: `fallback` (for
 * `[agent]` and `[verifier]` the `[environment]` baseline; for that, the older `allow_internet`, else Harbor's
 * default, public). Throws `invalid(text)` for another value.
 */
export function networkOf(
  mode: TomlValue | undefined,
  fallback: boolean,
  where: string,
  invalid: (text: string) => Error,
): boolean {
  if (mode === undefined) return fallback;
  if (typeof mode !== "string" || !(NETWORK_MODES as readonly string[]).includes(mode)) {
    throw invalid(`${where} network_mode must be one of ${NETWORK_MODES.map((m) => `"${m}"`).join(", ")}`);
  }
  return mode === "public";
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
