/**
 * Trigger keywords: a skill whose `triggers` occur in a user message (whole words, any case, any spacing inside a
 * phrase) has its instructions injected after the user's request, so the model follows them without having to
 * discover the skill first.
 */

import { escapeRegExp } from "@crow/util";
import type { SkillIndex } from "./search.js";
import type { Skill } from "./types.js";

/** A skill selected by a user message, and the trigger that selected it. */
export interface TriggerMatch {
  skill: Skill;
  trigger: string;
}

interface CompiledTrigger {
  skill: Skill;
  trigger: string;
  pattern: RegExp;
}

// Compiled once per skill list; the wiring calls matchTriggers on every user message.
const compiled = new WeakMap<readonly Skill[], CompiledTrigger[]>();

/**
 * The skills whose triggers occur in `text`, each once, in skill order. Word boundaries are letters, digits and `_`,
 * so "pr" does not fire inside "prompt" while "c++" or ".env" still match as written.
 */
export function matchTriggers(source: SkillIndex | readonly Skill[], text: string): TriggerMatch[] {
  const skills = isIndex(source) ? source.skills : source;
  let triggers = compiled.get(skills);
  if (!triggers) {
    triggers = skills.flatMap((skill) =>
      skill.triggers.map((trigger) => ({ skill, trigger, pattern: triggerPattern(trigger) })),
    );
    compiled.set(skills, triggers);
  }
  const matches: TriggerMatch[] = [];
  const seen = new Set<string>();
  for (const t of triggers) {
    if (seen.has(t.skill.name) || !t.pattern.test(text)) continue;
    seen.add(t.skill.name);
    matches.push({ skill: t.skill, trigger: t.trigger });
  }
  return matches;
}

/** A case-insensitive regular expression for `trigger` as a whole word or phrase. */
export function triggerPattern(trigger: string): RegExp {
  const words = trigger.trim().split(/\s+/).map(escapeRegExp).join("\\s+");
  return new RegExp(`(?<![\\p{L}\\p{N}_])${words}(?![\\p{L}\\p{N}_])`, "iu");
}

/**
 * The text to append after the user's request for the matched skills ("" when none): each skill's instructions
 * with its folder, so relative references and scripts resolve.
 */
export function triggerInjection(matches: readonly TriggerMatch[]): string {
  if (matches.length === 0) return "";
  const blocks = matches.map(
    ({ skill, trigger }) =>
      `<skill name="${skill.name}" folder="${skill.dir}" trigger="${trigger.replace(/"/g, "'")}">\n${skill.body.trim()}\n</skill>`,
  );
  const which = matches.length === 1 ? "this skill applies" : "these skills apply";
  return `The request mentions a skill trigger, so ${which}. Follow the instructions; paths are relative to the skill folder.\n${blocks.join("\n")}`;
}

function isIndex(source: SkillIndex | readonly Skill[]): source is SkillIndex {
  return !Array.isArray(source);
}
