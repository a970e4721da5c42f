/**
 * Values that come from data (a committed skills-lock.json, a fetched marketplace.json or index, a SOURCE typed by the
 * user) checked before they become git arguments or paths. Each check returns why the value is refused (a phrase to
 * follow the field's name), or undefined when it is fine; callers name the file, entry and field. The rules:
 * - nothing that git could read as an option (a leading `-`), even though every git operand also follows `--`;
 * - a ref is a ref by `git check-ref-format`'s rules (one level allowed), a locked commit is 40 or 64 hex characters;
 * - a git URL is one of the transports Crow fetches with (https, http, ssh, git, file, `user@host:path`), never
 *   git's `ext::`/`fd::` or another remote helper that runs a program;
 * - a skill name is a spec name (core's nameProblem), so it is always one path component;
 * - a path inside a source is relative and never climbs out with `..`.
 */
import { nameProblem } from "@crow/core/internal";

/** The transports Crow lets git use (GIT_ALLOW_PROTOCOL of every git it runs for skills). */
export const GIT_PROTOCOLS = "https:http:ssh:git:file";

function shown(value: string): string {
  return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value);
}

/** A leading `-`, or a control character (a newline in a value git reads line by line). */
export function optionProblem(value: string): string | undefined {
  if (value.startsWith("-")) return `${shown(value)} starts with "-" (git would read it as an option)`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for.
  if (/[\u0000-\u001f\u007f]/.test(value)) return `${shown(value)} has control characters`;
  return undefined;
}

/** `git check-ref-format --allow-onelevel`'s rules, plus no leading `-`. */
export function refProblem(ref: string): string | undefined {
  const why = (reason: string) => `${shown(ref)} is not a valid git ref (${reason})`;
  if (ref === "") return why("it is empty");
  if (ref.startsWith("-")) return why('it starts with "-": git would read it as an option');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this looks for.
  if (/[\u0000-\u0020\u007f~^:?*[\\]/.test(ref)) return why("it has a space, a control character or one of ~^:?*[\\");
  if (ref.includes("..")) return why('it has ".."');
  if (ref.includes("@{") || ref === "@") return why('it has "@{" or is "@"');
  if (ref.startsWith("/") || ref.endsWith("/") || ref.includes("//")) return why("it has an empty component");
  if (ref.endsWith(".")) return why('it ends with "."');
  for (const part of ref.split("/")) {
    if (part.startsWith(".")) return why('a component starts with "."');
    if (part.endsWith(".lock")) return why('a component ends with ".lock"');
  }
  return undefined;
}

/** A full commit id: 40 hex characters (SHA-1) or 64 (SHA-256). */
export function commitProblem(value: string): string | undefined {
  if (/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(value)) return undefined;
  return `${shown(value)} is not a commit id (40 or 64 hex characters)`;
}

/** A git URL of a transport in {@link GIT_PROTOCOLS}. */
export function gitUrlProblem(url: string): string | undefined {
  const option = optionProblem(url);
  if (option) return option;
  if (/^(https?|ssh|git|file):\/\/[^\s]+$/i.test(url)) return undefined;
  // scp-like `user@host:path` (the host never starts with "-": ssh would read it as an option).
  if (/^[\w.-]+@[\w][\w.-]*:[^\s]*$/.test(url) && !url.includes("::")) return undefined;
  return `${shown(url)} is not a git URL (https://, http://, ssh://, git://, file:// or user@host:path)`;
}

/** GitHub's `owner/repo`. */
export function githubRepoProblem(repo: string): string | undefined {
  if (/^[\w][\w.-]*\/[\w.-]+$/.test(repo) && !repo.split("/").some((p) => p === "." || p === "..")) return undefined;
  return `${shown(repo)} is not a GitHub owner/repo`;
}

/** A skill name by the spec (lowercase letters, digits and single hyphens, at most 64). */
export function skillNameProblem(name: string): string | undefined {
  const problem = nameProblem(name);
  return problem ? `${shown(name)} is not a skill name: it ${problem}` : undefined;
}

/** A relative POSIX path inside a source ("" for the source itself). */
export function innerPathProblem(value: string): string | undefined {
  if (value === "") return undefined;
  if (value.startsWith("/") || value.includes("\\") || value.includes("\0")) {
    return `${shown(value)} is not a relative path inside the source`;
  }
  if (value.split("/").includes("..")) return `${shown(value)} climbs out of the source with ".."`;
  return optionProblem(value);
}
