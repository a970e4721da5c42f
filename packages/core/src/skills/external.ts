/**
 * External skills (served by the session's MCP servers) as {@link Skill}s: listed from their frontmatter, ranked by
 * the same index as local skills, their SKILL.md read on demand and kept by digest, so a skill asked for twice (or
 * in another session) is read once while its publisher's digest stays the same.
 */

import type { ExternalSkill } from "../tools.js";
import { splitFrontmatter } from "./frontmatter.js";
import type { Skill } from "./types.js";

/** SKILL.md texts by origin, address and digest (only skills whose publisher gives a digest are kept). */
const contents = new Map<string, string>();
const MAX_CACHED = 200;

/**
 * `external` as a skill of the index: name and description searchable, body and content not yet read, no triggers
 * (a trigger injects a body, which an external skill only has once the model asked for it).
 */
export function externalSkill(external: ExternalSkill): Skill {
  return {
    name: external.name,
    description: external.description,
    triggers: [],
    body: "",
    content: "",
    hash: external.digest ?? "",
    dir: external.uri.replace(/\/SKILL\.md$/, ""),
    file: external.uri,
    files: [...(external.files ?? [])].sort(),
    root: external.origin,
    load: (signal) => external.load(signal),
  };
}

/** `skill` with its SKILL.md read (from the cache when its digest was read before); local skills as they are. */
export async function loadedSkill(skill: Skill, signal?: AbortSignal): Promise<Skill> {
  if (!skill.load) return skill;
  const key = skill.hash ? `${skill.root}\n${skill.file}\n${skill.hash}` : undefined;
  let content = key ? contents.get(key) : undefined;
  if (content === undefined) {
    content = await skill.load(signal);
    if (key) {
      if (contents.size >= MAX_CACHED) contents.delete(contents.keys().next().value as string);
      contents.set(key, content);
    }
  }
  const body = splitFrontmatter(content)?.body ?? content;
  return { ...skill, content, body: body.trim() === "" ? content : body };
}
