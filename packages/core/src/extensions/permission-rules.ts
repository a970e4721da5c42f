/**
 * Permission rules (config.yaml `permissions: {allow, ask, deny}`): each rule is `TOOL` or `TOOL(PATTERN)`.
 * - `TOOL` is a glob over the tool's name (`*` any characters, `?` one): `read`, `github_*`, `*`.
 * - `PATTERN` is a glob over what the call acts on, its *subject*:
 *   - the command of tools with a `command` argument (`terminal(git push*)`): `*` matches anything, spaces and `/`
 *     included. A compound command (`a && b`, `a; b`, `a | b`) matches when the whole of it or any of its parts
 *     does, so `cd x && git push` is caught by `terminal(git push*)`;
 *   - the path of tools with a `file_path` or `path` argument (`edit(/etc/**)`, `write(src/**)`): `**` matches
 *     across directories, `*` and `?` within one. An absolute (or `~/`) pattern is matched against the absolute
 *     path; a relative one against the path relative to the session's working directory, or to one of its
 *     additional directories (other workspace roots): a path outside all of them never matches a relative pattern,
 *     not even `**`;
 *   - the URL of tools with a `url` argument (`web_fetch(https://intranet.example/*)`), like a command.
 *   A call without such an argument never matches a rule with a pattern.
 * Commands and command patterns are compared with runs of whitespace collapsed to one space and trimmed, so
 * `git  push` (two spaces, or a tab) is still `git push`. Paths are compared as given and as their real path
 * (symlinks resolved, see real-path.ts): a `deny` or `ask` rule applies when either form matches, an `allow` rule
 * only when both do, so a symlink can neither slip past a deny rule nor borrow an allow rule's permission. A deny
 * or ask rule also applies to a hard link of a file it names, compared by device and inode (see same-file.ts).
 * Rules are a policy for a cooperative model, not a sandbox: a command can always be spelled in a way no glob
 * foresees (quotes, variables, `sh -c`); the operating system's sandbox is what confines commands.
 */
import path from "node:path";
import { expandTilde } from "../home.js";
import { realGlobOf, realPathOf } from "./real-path.js";
import { globNamesFile, linkedFile } from "./same-file.js";

/** The rule lists of config.yaml's `permissions`. */
export interface PermissionRules {
  /** Run without asking (in every mode; read-only still refuses tools that change things). */
  allow?: readonly string[];
  /** Always ask first (even in code mode). */
  ask?: readonly string[];
  /** Refused outright, with a tool result naming the rule. */
  deny?: readonly string[];
}

export type PermissionAction = "allow" | "ask" | "deny";

/** One parsed rule. */
export interface PermissionRule {
  /** The rule as written (what messages quote). */
  text: string;
  action: PermissionAction;
  tool: RegExp;
  /** The subject glob, when the rule has one. */
  pattern?: string;
}

/** A rule that cannot be parsed; the message says what is wrong and how to write it. */
export class PermissionRuleError extends Error {
  override name = "PermissionRuleError";
}

const RULE = /^([^\s()]+)(?:\((.*)\))?$/s;

/** Parses `TOOL` or `TOOL(PATTERN)`; throws {@link PermissionRuleError}. */
export function parsePermissionRule(text: string, action: PermissionAction): PermissionRule {
  const trimmed = text.trim();
  const match = RULE.exec(trimmed);
  const example = 'write it as a tool name ("terminal", "github_*") or a tool with a pattern ("terminal(git push*)")';
  if (!match) throw new PermissionRuleError(`invalid permission rule "${text}": ${example}`);
  const [, tool = "", pattern] = match;
  if (pattern !== undefined && pattern.trim() === "") {
    throw new PermissionRuleError(`invalid permission rule "${text}": the pattern in () is empty; ${example}`);
  }
  const rule: PermissionRule = { text: trimmed, action, tool: globRegExp(tool, "plain") };
  if (pattern !== undefined) rule.pattern = pattern.trim();
  return rule;
}

/** Parses every rule (deny, then ask, then allow); throws on the first invalid one. */
export function compilePermissionRules(rules: PermissionRules): PermissionRule[] {
  const actions: PermissionAction[] = ["deny", "ask", "allow"];
  return actions.flatMap((action) => (rules[action] ?? []).map((text) => parsePermissionRule(text, action)));
}

/** `plain`: `*` matches any characters; `path`: `**` any, `*` and `?` no `/`. Whole-string, case-sensitive. */
function globRegExp(glob: string, mode: "plain" | "path"): RegExp {
  let source = "";
  for (let i = 0; i < glob.length; i++) {
    const char = glob[i] as string;
    if (char === "*" && mode === "path" && glob[i + 1] === "*") {
      // `/**/` also matches a single `/` (`a/**/b` ≡ `a/b`).
      if (glob[i + 2] === "/") {
        source += "(?:.*/)?";
        i += 2;
      } else {
        source += ".*";
        i += 1;
      }
    } else if (char === "*") source += mode === "path" ? "[^/]*" : ".*";
    else if (char === "?") source += mode === "path" ? "[^/]" : ".";
    else source += char.replace(/[.+^${}()|[\]\\]/g, "\\$&");
  }
  return new RegExp(`^${source}$`, "s");
}

/** The parts of a compound shell command (split on `;`, `&&`, `||`, `|`, `&` and newlines), trimmed. */
export function commandParts(command: string): string[] {
  return command
    .split(/&&|\|\||[;|&\n]/)
    .map((part) => part.trim())
    .filter((part) => part !== "");
}

/** What a call acts on, for rules with a pattern. */
type Subject = { kind: "command" | "url"; value: string } | { kind: "path"; value: string };

function subjectOf(args: Record<string, unknown>): Subject | undefined {
  if (typeof args.command === "string") return { kind: "command", value: args.command };
  const file = typeof args.file_path === "string" ? args.file_path : args.path;
  if (typeof file === "string" && file !== "") return { kind: "path", value: file };
  if (typeof args.url === "string") return { kind: "url", value: args.url };
  return undefined;
}

/** A command as rules compare it: runs of whitespace (spaces, tabs, newlines) as one space, trimmed. */
export function normalizeCommand(command: string): string {
  return command.replace(/\s+/g, " ").trim();
}

/**
 * Whether path glob `pattern` matches absolute path `absolute` of a session working in `cwd` with the other
 * workspace roots `extraRoots`.
 */
function pathMatches(
  pattern: string,
  absolute: string,
  cwd: string | undefined,
  subject: string,
  extraRoots: readonly string[],
): boolean {
  const expanded = expandTilde(pattern);
  if (path.isAbsolute(expanded)) return globRegExp(expanded, "path").test(absolute);
  const glob = globRegExp(expanded, "path");
  // A relative pattern speaks of the workspace, in each of its roots: paths outside all of them never match.
  const relatives = cwd ? [cwd, ...extraRoots].map((root) => path.relative(root, absolute)) : [subject];
  return relatives.some(
    (relative) =>
      !(relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) &&
      glob.test(relative.split(path.sep).join("/")),
  );
}

/**
 * Whether a path rule matches: the path as given, and its real path against the pattern with its directories
 * resolved too (an absolute pattern) or against the real working directory (a relative one). `every`: both forms
 * must match (allow rules), else either one (deny and ask).
 */
function pathRuleMatches(
  pattern: string,
  file: string,
  cwd: string | undefined,
  every: boolean,
  extraRoots: readonly string[],
): boolean {
  const absolute = cwd ? path.resolve(cwd, expandTilde(file)) : path.normalize(file);
  const literal = pathMatches(pattern, absolute, cwd, file, extraRoots);
  if (literal !== every) return literal;
  const real = realPathOf(absolute);
  const expanded = expandTilde(pattern);
  const realPattern = path.isAbsolute(expanded) ? realGlobOf(expanded) : pattern;
  const realCwd = cwd === undefined ? undefined : realPathOf(cwd);
  const realRoots = extraRoots.map(realPathOf);
  if (
    pathMatches(pattern, real, realCwd, file, realRoots) ||
    (realPattern !== pattern && pathMatches(realPattern, real, realCwd, file, realRoots))
  ) {
    return true;
  }
  // A hard link has a path of its own: a deny or ask rule naming the file catches it by device and inode.
  const linked = every ? undefined : linkedFile(real);
  if (!linked) return false;
  const globs = path.isAbsolute(expanded)
    ? [expanded]
    : [cwd, ...extraRoots].flatMap((root) => (root === undefined ? [] : [path.join(root, expanded)]));
  return globs.some((glob) => {
    const regExp = globRegExp(glob, "path");
    return globNamesFile(glob, linked, (candidate) => regExp.test(candidate));
  });
}

function subjectMatches(
  rule: PermissionRule & { pattern: string },
  subject: Subject,
  cwd: string | undefined,
  extraRoots: readonly string[],
): boolean {
  if (subject.kind === "path") {
    return pathRuleMatches(rule.pattern, subject.value, cwd, rule.action === "allow", extraRoots);
  }
  if (subject.kind === "url") return globRegExp(rule.pattern, "plain").test(subject.value.trim());
  const glob = globRegExp(normalizeCommand(rule.pattern), "plain");
  const command = normalizeCommand(subject.value);
  if (glob.test(command)) return true;
  return commandParts(subject.value).some((part) => glob.test(normalizeCommand(part)));
}

/**
 * Whether a rule applies to a call of tool `name` with `args` in a session working in `cwd` (with the other
 * workspace roots `extraRoots`, its additional directories).
 */
export function ruleMatches(
  rule: PermissionRule,
  name: string,
  args: Record<string, unknown>,
  cwd?: string,
  extraRoots: readonly string[] = [],
): boolean {
  if (!rule.tool.test(name)) return false;
  if (rule.pattern === undefined) return true;
  const subject = subjectOf(args);
  return subject !== undefined && subjectMatches({ ...rule, pattern: rule.pattern }, subject, cwd, extraRoots);
}

/**
 * The rule that decides a call: the first matching deny rule, else the first ask rule, else the first allow rule
 * (deny > ask > allow, whatever their order in the file). Undefined when none matches: the mode decides.
 */
export function matchPermissionRule(
  rules: readonly PermissionRule[],
  name: string,
  args: Record<string, unknown>,
  cwd?: string,
  extraRoots: readonly string[] = [],
): PermissionRule | undefined {
  for (const action of ["deny", "ask", "allow"] as const) {
    const hit = rules.find((rule) => rule.action === action && ruleMatches(rule, name, args, cwd, extraRoots));
    if (hit) return hit;
  }
  return undefined;
}
