/**
 * SKILL.md → validated metadata. Pure: text in, fields and problems out. The rules follow the Agent Skills
 * specification (name: 1–64 characters of lowercase letters, digits and single hyphens, not starting or ending
 * with one, equal to the folder name; description: 1–1024 characters) plus Crow's optional `triggers`.
 */
import { createRequire } from "node:module";
import { errorText } from "../error-text.js";
import { MAX_DESCRIPTION, MAX_NAME } from "./types.js";

/**
 * The YAML parser, loaded on the first SKILL.md: core's index exports this module, so a static import put the parser
 * (~160 kB) in front of every start of the agent, most of which never read a skill.
 */
function yamlParser(): typeof import("yaml").parse {
  return (createRequire(import.meta.url)("yaml") as typeof import("yaml")).parse;
}

/** The frontmatter fields Crow uses, after validation and repair. */
export interface SkillMetadata {
  name: string;
  description: string;
  triggers: string[];
  body: string;
}

/** The parse result: `metadata` is undefined when the skill must be skipped (see the errors). */
export interface ParsedSkill {
  metadata?: SkillMetadata;
  errors: string[];
  warnings: string[];
  /** What is worth logging but not telling the user (a name installers normalise to the folder's, as expected). */
  notes?: string[];
}

const NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/** Why `name` is not a valid skill name, or undefined when it is. */
export function nameProblem(name: string): string | undefined {
  if (name.length === 0) return "is empty";
  if (name.length > MAX_NAME) return `is ${name.length} characters long (at most ${MAX_NAME})`;
  if (!NAME_PATTERN.test(name)) {
    return "must use lowercase letters, digits and single hyphens, and not start or end with a hyphen";
  }
  return undefined;
}

/**
 * `name` made a spec name the way installers make it (the `skills` CLI and `crow skills`): lower case, every run of
 * other characters one hyphen, no hyphen at either end (`Reviewing Pull Requests` → `reviewing-pull-requests`). May
 * be empty or too long: callers check it with {@link nameProblem}.
 */
export function normaliseSkillName(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

/** Splits `---\nyaml\n---\nbody`; undefined when the text does not open with a frontmatter block. */
export function splitFrontmatter(text: string): { yaml: string; body: string } | undefined {
  const src = text.replace(/^\uFEFF/, "");
  const open = /^---[ \t]*\r?\n/.exec(src);
  if (!open) return undefined;
  const rest = src.slice(open[0].length);
  // The closing fence may directly follow the opening one (empty frontmatter).
  const close = /(^|\r?\n)---[ \t]*(\r?\n|$)/.exec(rest);
  if (!close) return undefined;
  return { yaml: rest.slice(0, close.index), body: rest.slice(close.index + close[0].length) };
}

/**
 * Parses and validates one SKILL.md. `folder` is the skill folder's name, which the name must equal.
 * Errors (no or invalid frontmatter, no description, a folder name that is itself invalid) skip the skill;
 * a bad or mismatched name falls back to the folder name, an overlong description is cut, bad triggers are dropped —
 * each reported, so one sloppy skill never hides the others.
 */
export function parseSkill(text: string, folder: string): ParsedSkill {
  const errors: string[] = [];
  const warnings: string[] = [];
  const notes: string[] = [];
  const parts = splitFrontmatter(text);
  if (!parts) {
    return {
      errors: ["no YAML frontmatter: SKILL.md must start with a '---' line and close it with another"],
      warnings,
    };
  }
  let data: unknown;
  try {
    // An empty block parses to null: treat it as an empty mapping, so the missing fields are named.
    data = yamlParser()(parts.yaml) ?? {};
  } catch (error) {
    const message = errorText(error).split("\n")[0];
    return { errors: [`invalid YAML frontmatter: ${message}`], warnings };
  }
  if (typeof data !== "object" || data === null || Array.isArray(data)) {
    return { errors: ["the frontmatter must be a YAML mapping with name and description"], warnings };
  }
  const fields = data as Record<string, unknown>;

  const description = typeof fields.description === "string" ? fields.description.trim() : "";
  if (description === "") errors.push("missing description (1–1024 characters saying what the skill does and when)");

  const folderProblem = nameProblem(folder);
  let name = folder;
  if (fields.name === undefined || fields.name === null || fields.name === "") {
    if (folderProblem) errors.push(`missing name, and the folder name "${folder}" ${folderProblem}`);
    else warnings.push(`missing name; using the folder name "${folder}"`);
  } else if (typeof fields.name !== "string") {
    if (folderProblem) errors.push(`name must be a string, and the folder name "${folder}" ${folderProblem}`);
    else warnings.push(`name must be a string; using the folder name "${folder}"`);
  } else {
    const problem = nameProblem(fields.name);
    if (folderProblem) {
      errors.push(`the folder name "${folder}" ${folderProblem}; rename the folder to a valid skill name`);
    } else if (problem && normaliseSkillName(fields.name) === folder) {
      // Installed under its normalised name (crow skills, the skills CLI): nothing the user needs to hear again.
      notes.push(`name "${fields.name}" ${problem}; loaded as "${folder}", its normalised name and folder`);
    } else if (problem) {
      warnings.push(`name "${fields.name}" ${problem}; using the folder name "${folder}"`);
    } else if (fields.name !== folder) {
      warnings.push(`name "${fields.name}" differs from its folder name "${folder}"; using "${folder}"`);
    } else {
      name = fields.name;
    }
  }
  if (errors.length > 0) return { errors, warnings };

  let shortDescription = description;
  if (description.length > MAX_DESCRIPTION) {
    warnings.push(`description is ${description.length} characters long (at most ${MAX_DESCRIPTION}); it was cut`);
    shortDescription = `${description.slice(0, MAX_DESCRIPTION - 1)}…`;
  }

  return {
    metadata: {
      name,
      description: shortDescription,
      triggers: readTriggers(fields.triggers, warnings),
      body: parts.body,
    },
    errors,
    warnings,
    notes,
  };
}

/** `triggers`: a list of non-empty strings (a single string is accepted as a list of one). */
function readTriggers(value: unknown, warnings: string[]): string[] {
  if (value === undefined || value === null) return [];
  const list = typeof value === "string" ? [value] : value;
  if (!Array.isArray(list)) {
    warnings.push("triggers must be a list of keywords or phrases; ignored");
    return [];
  }
  const triggers: string[] = [];
  for (const item of list) {
    if (typeof item === "string" && item.trim() !== "") triggers.push(item.trim());
    else if (typeof item === "number") triggers.push(String(item));
    else warnings.push(`trigger ${JSON.stringify(item)} is not a keyword or phrase; ignored`);
  }
  return [...new Set(triggers)];
}
