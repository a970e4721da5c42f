/**
 * `${VAR}` and `${VAR:-default}` in config values (strings anywhere in the parsed YAML tree; keys are left alone).
 * `${VAR:-default}` uses the default when VAR is unset or empty; `${VAR}` with VAR unset is an error naming the
 * variable and the key, so a forgotten API key is caught at startup rather than as a 401 mid-session (upstream
 * silently substituted ""). `$${` writes a literal `${`.
 */
import { keyPath } from "./errors.js";

/** A reference that cannot be resolved, with where it was found. */
export interface InterpolationProblem {
  path: PropertyKey[];
  message: string;
}

const REFERENCE = /\$\$\{|\$\{([^}]*)\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function substitute(
  value: string,
  env: Readonly<Record<string, string | undefined>>,
  path: PropertyKey[],
  problems: InterpolationProblem[],
): string {
  return value.replace(REFERENCE, (match: string, inner: string | undefined) => {
    if (match === "$${") return "${";
    const body = inner ?? "";
    const split = body.indexOf(":-");
    const name = (split < 0 ? body : body.slice(0, split)).trim();
    if (!NAME.test(name)) {
      problems.push({ path, message: `invalid reference "${match}" (expected \${NAME} or \${NAME:-default})` });
      return "";
    }
    const found = env[name];
    if (split >= 0) return found === undefined || found === "" ? body.slice(split + 2) : found;
    if (found === undefined) {
      problems.push({
        path,
        message: `environment variable ${name} is not set (set it in the environment or the .env file, or write \${${name}:-default})`,
      });
      return "";
    }
    return found;
  });
}

/**
 * A copy of `tree` with every string interpolated from `env`. Problems are collected (all of them, in document
 * order) rather than thrown, so the caller can report them together with the file name.
 */
export function interpolate(
  tree: unknown,
  env: Readonly<Record<string, string | undefined>>,
  problems: InterpolationProblem[],
  path: PropertyKey[] = [],
): unknown {
  if (typeof tree === "string") return substitute(tree, env, path, problems);
  if (Array.isArray(tree)) return tree.map((item, i) => interpolate(item, env, problems, [...path, i]));
  if (tree !== null && typeof tree === "object") {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(tree)) out[key] = interpolate(value, env, problems, [...path, key]);
    return out;
  }
  return tree;
}

/** One line per problem: `<key path>: <message>`. */
export function describeProblems(problems: readonly InterpolationProblem[]): string[] {
  return problems.map((p) => `${keyPath(p.path)}: ${p.message}`);
}
