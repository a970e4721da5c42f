/**
 * The skills extension's external skills: what a session's MCP servers serve (`CrowSession.externalSkills`), joined
 * to its local skills in one index, so they are ranked alike. Kept apart from skills-extension.ts: the local-skill wiring does
 * not depend on it.
 */
import type { CrowSession } from "../api/types.js";
import { externalSkill } from "../skills/external.js";
import { createSkillIndex, type SkillIndex } from "../skills/search.js";
import type { Skill } from "../skills/types.js";

/**
 * The index over `local` plus the session's external skills, or undefined when there are none. Servers that could
 * not list theirs are told to the user in one warning; the rest are offered.
 */
export async function withExternalSkills(
  session: CrowSession,
  local: readonly Skill[],
  signal: AbortSignal,
): Promise<SkillIndex | undefined> {
  const listing = session.externalSkills(signal);
  if (!listing) return undefined;
  const { skills, problems } = await listing;
  if (problems.length > 0) {
    session.notify(`Some MCP servers' skills are not offered:\n${problems.map((p) => `- ${p}`).join("\n")}`, "warning");
  }
  if (skills.length === 0 || signal.aborted) return undefined;
  return createSkillIndex([...local, ...skills.map(externalSkill)]);
}
