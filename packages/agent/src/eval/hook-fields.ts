/**
 * The task.toml fields of Harbor's hooks and verifier environment, read for suite.ts and steps.ts (what runs them is
 * hooks.ts and verifier-env.ts): `[[verifier.collect]]`, a step's `workdir/`, `[verifier] environment_mode` and
 * `[verifier.environment]`.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { SuiteError, table } from "./task-fields.js";
import type { TomlTable, TomlValue } from "./toml.js";

/** One `[[verifier.collect]]` entry. */
export interface CollectHook {
  command: string;
  /** The compose service it runs in: only "main" (the agent's environment) exists in a trial. */
  service: string;
  timeoutSec: number;
}

/** The service a hook runs in by default: the agent's environment. */
export const MAIN_SERVICE = "main";

/** `[[verifier.collect]]` (or a step's) of task.toml; `where` names it in errors. */
export function collectHooks(value: TomlValue | undefined, where: string): CollectHook[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new SuiteError(`${where} must be [[…collect]] tables`);
  return value.map((entry, index) => {
    const hook = entry && typeof entry === "object" && !Array.isArray(entry) && !(entry instanceof Date) ? entry : {};
    const at = `${where} #${index + 1}`;
    if (typeof hook.command !== "string" || hook.command.trim() === "") {
      throw new SuiteError(`${at}: command must be a shell command`);
    }
    const service = hook.service ?? MAIN_SERVICE;
    if (typeof service !== "string" || !/^[A-Za-z0-9][\w.-]*$/.test(service)) {
      throw new SuiteError(`${at}: service must be a compose service name`);
    }
    const timeout = hook.timeout_sec ?? 60;
    if (typeof timeout !== "number" || !(timeout > 0)) {
      throw new SuiteError(`${at}: timeout_sec must be a positive number of seconds`);
    }
    return { command: hook.command, service, timeoutSec: timeout };
  });
}

/** The step's `workdir/` when it has one (what is copied into the working directory before the step). */
export function stepWorkdir(stepDir: string): string | undefined {
  const dir = path.join(stepDir, "workdir");
  return existsSync(dir) ? dir : undefined;
}

/** `environment_mode` and `[verifier.environment]` of `[verifier]` (or a step's `[steps.verifier]`). */
export interface VerifierEnvironmentSpec {
  mode: "shared" | "separate" | undefined;
  environment: TomlTable | undefined;
}

/** The spec of a `[verifier]` table; undefined when it names neither. */
export function verifierEnvironmentSpec(verifier: TomlTable, where: string): VerifierEnvironmentSpec | undefined {
  const mode = verifier.environment_mode;
  if (mode !== undefined && mode !== "shared" && mode !== "separate") {
    throw new SuiteError(`${where} environment_mode must be "shared" or "separate"`);
  }
  const environment = verifier.environment;
  if (
    environment !== undefined &&
    (typeof environment !== "object" || Array.isArray(environment) || environment instanceof Date)
  ) {
    throw new SuiteError(`${where} environment must be a table ([verifier.environment])`);
  }
  if (mode === undefined && environment === undefined) return undefined;
  return { mode, environment: environment === undefined ? undefined : table(environment) };
}
