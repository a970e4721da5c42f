/**
 * Strict Agent Skills specification check of one SKILL.md, for installers: unlike {@link parseSkill} (which repairs
 * what it can so a sloppy skill still loads), every departure from the spec is reported, each with its field.
 * Pure: text in, problems out.
 */
import { createRequire } from "node:module";
import { errorText } from "../error-text.js";
import { nameProblem, splitFrontmatter } from "./frontmatter.js";
import { MAX_DESCRIPTION } from "./types.js";

/** The longest accepted `compatibility` (Agent Skills specification). */
export const MAX_COMPATIBILITY = 500;

/** The frontmatter fields the specification defines, plus Crow's own `triggers`. */
const KNOWN_FIELDS = new Set([
  "name",
  "description",
  "license",
  "compatibility",
  "metadata",
  "allowed-tools",
  "triggers",
]);

/**
 * One departure from the specification. `field` names the frontmatter field (`frontmatter` for the block itself).
 * `error`: the skill does not meet the spec (installers refuse it); `warning`: allowed but worth saying.
 */
export interface SpecProblem {
  severity: "error" | "warning";
  field: string;
  message: string;
}

/** What an installer needs from a valid SKILL.md besides its validity. */
export interface SpecResult {
  problems: SpecProblem[];
  /** The `allowed-tools` value when declared (a space-separated tool list, experimental in the spec). */
  allowedTools?: string;
  /** The `description`, when it is a string. */
  description?: string;
  /** The `name`, when it is a non-empty string (whether or not it is a valid name). */
  name?: string;
}

/** Checks `text` (a SKILL.md) of the folder named `folder` against every rule of the specification. */
export function checkSkillSpec(text: string, folder: string): SpecResult {
  const problems: SpecProblem[] = [];
  const error = (field: string, message: string) => problems.push({ severity: "error", field, message });
  const parts = splitFrontmatter(text);
  if (!parts) {
    error("frontmatter", "missing: SKILL.md must start with a '---' line, the YAML fields, and another '---' line");
    return { problems };
  }
  let data: unknown;
  try {
    const parse = (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse;
    data = parse(parts.yaml) ?? {};
  } catch (cause) {
    const message = errorText(cause).split("\n")[0] ?? "";
    error("frontmatter", `invalid YAML: ${message}`);
    return { problems };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    error("frontmatter", "must be a YAML mapping of fields (name, description, …)");
    return { problems };
  }
  const fields = data as Record<string, unknown>;

  const name = fields.name;
  if (name === undefined || name === null || name === "") error("name", "missing (required)");
  else if (typeof name !== "string") error("name", `must be a string, not ${kind(name)}`);
  else {
    const problem = nameProblem(name);
    if (problem) error("name", `"${name}" ${problem}${nameHint(name)}`);
    else if (name !== folder) error("name", `"${name}" must equal its folder name "${folder}"`);
  }

  const description = fields.description;
  if (description === undefined || description === null) error("description", "missing (required, 1–1024 characters)");
  else if (typeof description !== "string") error("description", `must be a string, not ${kind(description)}`);
  else if (description.trim() === "") error("description", "is empty (1–1024 characters)");
  else if (description.length > MAX_DESCRIPTION) {
    error("description", `is ${description.length} characters long (at most ${MAX_DESCRIPTION})`);
  }

  const compatibility = fields.compatibility;
  if (compatibility !== undefined) {
    if (typeof compatibility !== "string") error("compatibility", `must be a string, not ${kind(compatibility)}`);
    else if (compatibility.trim() === "") error("compatibility", "is empty (1–500 characters when present)");
    else if (compatibility.length > MAX_COMPATIBILITY) {
      error("compatibility", `is ${compatibility.length} characters long (at most ${MAX_COMPATIBILITY})`);
    }
  }

  const metadata = fields.metadata;
  if (metadata !== undefined) {
    if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata)) {
      error("metadata", `must be a mapping of string keys to string values, not ${kind(metadata)}`);
    } else {
      for (const [key, value] of Object.entries(metadata)) {
        if (typeof value !== "string") error(`metadata.${key}`, `must be a string, not ${kind(value)}`);
      }
    }
  }

  for (const field of ["license", "allowed-tools"]) {
    const value = fields[field];
    if (value !== undefined && typeof value !== "string") error(field, `must be a string, not ${kind(value)}`);
  }

  for (const field of Object.keys(fields)) {
    if (!KNOWN_FIELDS.has(field)) {
      problems.push({
        severity: "warning",
        field,
        message:
          "is not a field of the Agent Skills specification (name, description, license, compatibility, metadata, allowed-tools)",
      });
    }
  }

  const allowed = fields["allowed-tools"];
  return {
    problems,
    ...(typeof allowed === "string" && allowed.trim() !== "" ? { allowedTools: allowed.trim() } : {}),
    ...(typeof description === "string" ? { description: description.trim() } : {}),
    ...(typeof name === "string" && name !== "" ? { name } : {}),
  };
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "a mapping" : `a ${typeof value}`;
}

/** Which rule an invalid name breaks, for the message. */
function nameHint(name: string): string {
  if (name.length === 0 || name.length > 64) return "";
  if (/[^a-z0-9-]/.test(name)) return " (it has other characters)";
  if (name.includes("--")) return " (it has consecutive hyphens)";
  return " (it starts or ends with a hyphen)";
}
