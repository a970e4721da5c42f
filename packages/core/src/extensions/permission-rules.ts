/**
 * Permission rules (config.yaml `permissions: {allow, ask, deny}`): each rule is `TOOL` or `TOOL(PATTERN)`.
 * - `TOOL` is a glob over the tool's name (`*` any characters, `?` one): `read`, `github_*`, `*`.
 * - `PATTERN` is a glob over what the call acts on, its *subject*:
 *   - the command of tools with a `command` argument (`terminal(git push*)`): `*` matches anything, spaces and `/`
 *     included. A compound command (`a && b`, `a; b`, `a | b`) matches when the whole of it or any of its parts
 *     does, so `cd x && git push` is caught by `terminal(git push*)`;
 *   - the path of tools with a `file_path` or `path` argument (`edit(/etc/**)`, `write(src/**)`): `**` matches
 *     across directories, `*` and `?` within one. An absolute (or `~/`) pattern is matched against the absolute
 *     path; a relative one against the path relative to the session's working directory (a path outside it never
 *     matches a relative pattern, not even `**`);
 *   - the URL of tools with a `url` argument (`web_fetch(https://intranet.example/*)`), like a command.
 *   A call without such an argument never matches a rule with a pattern.
 * Rules are a policy for a cooperative model, not a sandbox: a command can always be spelled in a way no glob
 * foresees.
 */
import path from "node:path";
import { expandTilde } from "../home.js";

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

function subjectMatches(pattern: string, subject: Subject, cwd: string | undefined): boolean {
  if (subject.kind === "path") {
    const glob = globRegExp(expandTilde(pattern), "path");
    const absolute = cwd ? path.resolve(cwd, expandTilde(subject.value)) : path.normalize(subject.value);
    if (path.isAbsolute(expandTilde(pattern))) return glob.test(absolute);
    const relative = cwd ? path.relative(cwd, absolute) : subject.value;
    // A relative pattern speaks of the working directory: paths outside it never match.
    if (relative === ".." || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) return false;
    return glob.test(relative.split(path.sep).join("/"));
  }
  const glob = globRegExp(pattern, "plain");
  const value = subject.value.trim();
  if (glob.test(value)) return true;
  return subject.kind === "command" && commandParts(value).some((part) => glob.test(part));
}

/** Whether a rule applies to a call of tool `name` with `args` in a session working in `cwd`. */
export function ruleMatches(rule: PermissionRule, name: string, args: Record<string, unknown>, cwd?: string): boolean {
  if (!rule.tool.test(name)) return false;
  if (rule.pattern === undefined) return true;
  const subject = subjectOf(args);
  return subject !== undefined && subjectMatches(rule.pattern, subject, cwd);
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
): PermissionRule | undefined {
  for (const action of ["deny", "ask", "allow"] as const) {
    const hit = rules.find((rule) => rule.action === action && ruleMatches(rule, name, args, cwd));
    if (hit) return hit;
  }
  return undefined;
}
