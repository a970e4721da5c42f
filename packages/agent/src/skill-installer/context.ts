/** What every `crow skills` subcommand works with: its streams, environment, folders, and the yes/selection prompts. */
import path from "node:path";
import { projectRoot } from "@crow/core/internal";
import { crowHome } from "../config/home.js";
import type { FoundSkill } from "./discover.js";
import { SourceError } from "./errors.js";
import type { FetchOptions } from "./sources.js";

export interface SkillsIo {
  output?: NodeJS.WritableStream;
  errors?: NodeJS.WritableStream;
  input?: NodeJS.ReadableStream & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

export interface SkillsContext {
  out: (line: string) => void;
  err: (line: string) => void;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** Crow's home: the git cache, the audit log and the trust store live there. */
  home: string;
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  terminal: boolean;
}

export function skillsContext(io: SkillsIo): SkillsContext {
  const output = io.output ?? process.stdout;
  const errors = io.errors ?? process.stderr;
  const env = io.env ?? process.env;
  const input = io.input ?? process.stdin;
  return {
    out: (line) => output.write(`${line}\n`),
    err: (line) => errors.write(`${line}\n`),
    env,
    cwd: io.cwd ?? process.cwd(),
    home: crowHome(env),
    input,
    terminal: input.isTTY === true,
  };
}

/** What fetching a source needs; the project (the git top level of the cwd) is where no program is taken from. */
export async function fetchOptions(context: SkillsContext): Promise<FetchOptions> {
  return { home: context.home, env: context.env, untrusted: [context.cwd, await projectRoot(context.cwd)] };
}

/** A refusal with its exit code: 2 for what the user must pass differently, 1 for a no or a failed check. */
export class Refused extends Error {
  constructor(
    message: string,
    readonly code: 1 | 2,
  ) {
    super(message);
  }
}

/** Asks one question on the terminal and resolves to the answer line. */
async function ask(context: SkillsContext, question: string): Promise<string> {
  const { createPrompter } = await import("../commands/prompter.js");
  const prompter = createPrompter(context.input, process.stderr);
  try {
    return await prompter.ask(question);
  } finally {
    prompter.close();
  }
}

/** `text` on one line, cut to `width` characters with an ellipsis (lists show a description this way). */
export function oneLine(text: string, width = 100): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}

/** Whether `wanted` (a name the user typed) means `skill`: its installed name, declared name or folder, any case. */
function means(skill: FoundSkill, wanted: string): boolean {
  const w = wanted.toLowerCase();
  return [skill.name, skill.declared, path.basename(skill.dir)].some((n) => n.toLowerCase() === w);
}

/**
 * The skills to install among `found`: those `names` gives (each must exist; matched as {@link means} says), all with
 * `all` or when there is one; else the list is shown and, on a terminal, the user picks; without a terminal it is a
 * usage error (exit 2).
 */
export async function selectSkills(
  context: SkillsContext,
  found: FoundSkill[],
  names: readonly string[],
  all: boolean,
): Promise<FoundSkill[]> {
  if (names.length > 0) {
    const missing = names.filter((n) => !found.some((s) => means(s, n)));
    if (missing.length > 0) {
      throw new Refused(
        `no skill named ${missing.join(", ")} in this source; it has: ${found.map((s) => s.name).join(", ")}`,
        2,
      );
    }
    return found.filter((s) => names.some((n) => means(s, n)));
  }
  if (all || found.length === 1) return found;
  context.err(`This source has ${found.length} skills:`);
  for (const skill of found)
    context.err(`  ${skill.name}${skill.plugin ? ` (plugin ${skill.plugin})` : ""}  ${oneLine(skill.description)}`);
  if (!context.terminal) {
    throw new Refused("several skills and no terminal to ask: pass --skill NAME (repeatable) or --all", 2);
  }
  const answer = (await ask(context, "Install which? (names separated by spaces, or all)")).trim();
  if (answer === "all") return found;
  const picked = answer.split(/[\s,]+/).filter(Boolean);
  if (picked.length === 0) throw new Refused("nothing picked; nothing installed", 1);
  return selectSkills(context, found, picked, false);
}

/**
 * Splits the chosen skills into those that install and those that cannot: each notice is printed once per skill
 * (a normalised name, a spec departure), each refused skill with its reason. Refuses (exit 1) when none can.
 */
export function installable(context: SkillsContext, skills: readonly FoundSkill[]): FoundSkill[] {
  const ok: FoundSkill[] = [];
  for (const skill of skills) {
    if (skill.refused) {
      context.err(`not installed: ${skill.shown}: ${skill.refused}`);
      continue;
    }
    for (const notice of skill.notices) context.err(`notice: ${skill.shown}: ${notice}`);
    ok.push(skill);
  }
  if (ok.length === 0) throw new Refused("no skill of this source can be installed (see above); nothing installed", 1);
  return ok;
}

/** Asks a yes/no question on the terminal; true for y or yes. */
export async function askYes(context: SkillsContext, question: string): Promise<boolean> {
  const answer = (await ask(context, question)).trim().toLowerCase();
  return answer === "y" || answer === "yes";
}

/**
 * The gate before code lands: skills that ship scripts or ask for `allowed-tools` are shown, and need `--yes` or a
 * yes typed on the terminal. Without a terminal and without `--yes` it refuses (exit 2); a no refuses (exit 1).
 */
export async function confirmRuns(context: SkillsContext, skills: readonly FoundSkill[], yes: boolean): Promise<void> {
  const running = skills.filter((s) => s.runs.length > 0);
  if (running.length === 0) return;
  for (const skill of running) context.err(`skill ${skill.name} can run code: ${skill.runs.join("; ")}`);
  if (yes) return;
  const which = running.map((s) => s.name).join(", ");
  if (!context.terminal) {
    throw new Refused(`${which} can run code: read it, then pass --yes to install it; nothing installed`, 2);
  }
  if (!(await askYes(context, `Install ${which} anyway? [y/N]`))) throw new Refused("nothing installed", 1);
}

export { SourceError };
