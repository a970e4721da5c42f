/**
 * The one naming rule of `crow skills`, for a source of one skill or of many, for `add` and for `install` from a
 * lockfile: a skill is installed in the folder of its declared `name` (its frontmatter's, as the `skills` CLI does),
 * normalised to a spec name when it breaks the spec's rule (`Reviewing Pull Requests` → `reviewing-pull-requests`,
 * the folder the CLI installs it in). A name is refused only when it is unsafe as a path or says nothing: a path
 * separator, a control character, a leading `.` or `-`, no letter or digit, or longer than a spec name once
 * normalised. The normalised name always passes core's `nameProblem` (checks.ts `skillNameProblem`) before it
 * becomes a path.
 */
import { normaliseSkillName } from "@crow/core/internal";
import { skillNameProblem } from "./checks.js";

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** The declared name as the CLI records it (its lockfile key): line breaks made spaces, trimmed. */
export function declaredName(raw: string): string {
  return raw.replace(/[\r\n]+/g, " ").trim();
}

/**
 * The folder `name` installs in, with the rule it broke when it had to be normalised (`rule`), or why it is refused
 * (`refused`, a phrase following the name, always containing "is not a skill name").
 */
export function folderName(name: string): { name: string; rule?: string } | { refused: string } {
  const refuse = (why: string) => ({ refused: `${shown(name)} is not a skill name: it ${why}` });
  if (name.trim() === "") return refuse("is empty");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for.
  if (/[/\\\u0000-\u001f\u007f]/.test(name)) return refuse("has a path separator or a control character");
  if (/^\s*[.-]/.test(name)) return refuse('starts with "." or "-"');
  if (skillNameProblem(name) === undefined) return { name };
  // Core's rule, so the loader recognises the folder as this name's (and says nothing at session start).
  const normalised = normaliseSkillName(name);
  if (normalised === "") return refuse("has no letter or digit");
  const problem = skillNameProblem(normalised);
  if (problem) return refuse(`is ${normalised.length} characters long once normalised (at most 64)`);
  return {
    name: normalised,
    rule: "a skill name is lowercase letters, digits and single hyphens (Agent Skills specification)",
  };
}
