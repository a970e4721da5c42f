/**
 * Which skills a request already carries, and the block that brings back the ones compaction summarised away. A skill
 * brought into a conversation (by a trigger or `get_skill_details`) is instructions the model was told to follow: a
 * summary must not quietly drop them, and the same instructions must never sit twice in one context.
 */
import { type ChatMessage, contentText } from "../messages.js";
import type { Skill } from "./types.js";

/** The names of `skills` whose instructions (their SKILL.md body) appear in `messages`. */
export function skillsInContext(messages: readonly ChatMessage[], skills: Iterable<Skill>): Set<string> {
  const texts = messages.map((m) => (m.role === "assistant" ? "" : contentText(m.content)));
  const present = new Set<string>();
  for (const skill of skills) {
    const body = skill.body.trim();
    if (body === "" || texts.some((text) => text.includes(body))) present.add(skill.name);
  }
  return present;
}

/** The text restoring `skills` after a compaction ("" when none), in the trigger injection's `<skill>` form. */
export function skillReinjection(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  const blocks = skills.map(
    (skill) => `<skill name="${skill.name}" folder="${skill.dir}">\n${skill.body.trim()}\n</skill>`,
  );
  return (
    "Skills brought into this conversation before it was compacted; their instructions still apply (paths are " +
    `relative to the skill folder).\n${blocks.join("\n")}`
  );
}
