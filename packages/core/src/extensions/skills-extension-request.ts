/**
 * How the skills extension shapes each model request (its `before_request` transform): the skill tools offered only
 * when the session has skills, triggered skills' instructions appended to the latest user message (request view
 * only), and skills a compaction summarised away attached again to the compacted history's first user message.
 */
import type { CrowSession } from "../api/types.js";
import type { RequestDraft } from "../hooks/types.js";
import { type ChatMessage, contentText } from "../messages.js";
import { skillReinjection, skillsInContext } from "../skills/in-context.js";
import { matchTriggers, type TriggerMatch, triggerInjection } from "../skills/triggers.js";
import type { Skill } from "../skills/types.js";
import type { Logger } from "./api.js";
import { type SessionSkillState, SKILL_TOOLS } from "./skills-extension-session.js";

/** The request with the skill tools offered or not, triggered skills injected, and skills lost to compaction back. */
export function shapeRequest(
  log: Logger,
  session: CrowSession,
  state: SessionSkillState | undefined,
  draft: RequestDraft,
): RequestDraft {
  // No skills: no tools to offer either (progressive disclosure costs nothing when there is nothing to show).
  if (!state || state.index.skills.length === 0) {
    return {
      ...draft,
      tools: draft.tools.filter((t) => !(SKILL_TOOLS as readonly string[]).includes(t.function.name)),
    };
  }
  const latest = draft.messages.findLast((m) => m.role === "user");
  if (latest && !state.examined.has(latest)) bringTriggered(log, session, state, latest);
  let messages = requestView(state, draft.messages);
  state.present = skillsInContext(messages, state.brought.values());
  if (restoreCompacted(log, session, state, draft.messages)) messages = requestView(state, draft.messages);
  return { ...draft, messages };
}

/**
 * Matches the latest user message (once) against the skills' triggers and `/skill-name` commands; the skills it
 * brings in that are not already in context are injected into that message.
 */
function bringTriggered(log: Logger, session: CrowSession, state: SessionSkillState, latest: ChatMessage): void {
  state.examined.add(latest);
  const text = contentText(latest.content);
  const matches = [...commandMatch(state.index.skills, text), ...matchTriggers(state.index, text)].filter(
    (m, i, all) => !state.present.has(m.skill.name) && all.findIndex((o) => o.skill === m.skill) === i,
  );
  if (matches.length === 0) return;
  for (const m of matches) {
    state.brought.set(m.skill.name, m.skill);
  }
  state.injections.set(latest, triggerInjection(matches));
  log.debug(`session ${session.id}: trigger → ${matches.map((m) => m.skill.name).join(", ")}`);
}

/**
 * A compaction summarised away a skill brought in earlier: it comes back, attached to the first user message of the
 * compacted history so that later requests keep the same prefix. Returns whether anything was restored.
 */
function restoreCompacted(
  log: Logger,
  session: CrowSession,
  state: SessionSkillState,
  history: readonly ChatMessage[],
): boolean {
  const missing = [...state.brought.values()].filter((skill) => !state.present.has(skill.name));
  const first = history.find((m) => m.role === "user");
  if (missing.length === 0 || !first) return false;
  const earlier = state.injections.get(first);
  const restore = skillReinjection(missing);
  state.injections.set(first, earlier ? `${earlier}\n\n${restore}` : restore);
  for (const skill of missing) state.present.add(skill.name);
  log.debug(`session ${session.id}: skills restored after compaction: ${missing.map((s) => s.name)}`);
  return true;
}

/** The history as the request carries it: each injection appended to its user message. */
function requestView(state: SessionSkillState, history: readonly ChatMessage[]): ChatMessage[] {
  return history.map((m) => {
    const injection = state.injections.get(m);
    return injection ? withInjection(m, injection) : m;
  });
}

/** The message with `injection` appended after the user's request. */
function withInjection(message: ChatMessage, injection: string): ChatMessage {
  if (message.role !== "user") return message;
  if (typeof message.content === "string") return { ...message, content: `${message.content}\n\n${injection}` };
  return { ...message, content: [...message.content, { type: "text", text: injection }] };
}

/** The skill a prompt `/skill-name …` names, as a trigger match. */
function commandMatch(skills: readonly Skill[], text: string): TriggerMatch[] {
  const name = /^\/([a-z0-9-]+)(?:\s|$)/.exec(text.trim())?.[1];
  const skill = name ? skills.find((s) => s.name === name) : undefined;
  return skill ? [{ skill, trigger: `/${skill.name}` }] : [];
}
