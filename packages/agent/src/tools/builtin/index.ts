/**
 * The profiles of crow-mcp's tools, by their name on the server: adding a built-in tool with a display of its own is
 * one file in this folder and one line here. Any other name gets the generic profile.
 */
import { editProfile } from "./edit.js";
import { genericProfile, type ToolProfile } from "./profile.js";
import { readProfile } from "./read.js";
import { terminalProfile } from "./terminal.js";
import { webFetchProfile } from "./web-fetch.js";
import { webSearchProfile } from "./web-search.js";
import { writeProfile } from "./write.js";

export type { EditorCall, EditorRoute, EditorRun, FileChangeProfile, ToolProfile } from "./profile.js";
export { genericProfile } from "./profile.js";

const PROFILES: ReadonlyMap<string, ToolProfile> = new Map([
  ["terminal", terminalProfile],
  ["read", readProfile],
  ["write", writeProfile],
  ["edit", editProfile],
  ["web_search", webSearchProfile],
  ["web_fetch", webFetchProfile],
]);

/**
 * The profile of a tool by its name on its server or as a model wrote it: the exact name, else a server-prefixed
 * form (`crow-mcp_read`, `mcp__crow__edit`); a crow-mcp reached through another name (a remote toolserver) serves the
 * same tools. Undefined for other names (`extra`: further profiles, checked first, e.g. a host's own tools).
 */
export function knownProfile(name: string, extra?: ReadonlyMap<string, ToolProfile>): ToolProfile | undefined {
  for (const profiles of extra ? [extra, PROFILES] : [PROFILES]) {
    const exact = profiles.get(name);
    if (exact) return exact;
    for (const [key, profile] of profiles) if (name.endsWith(`_${key}`)) return profile;
  }
  return undefined;
}

/** The profile of a tool ({@link knownProfile}), else the generic one of its name. */
export function toolProfile(name: string, extra?: ReadonlyMap<string, ToolProfile>): ToolProfile {
  return knownProfile(name, extra) ?? genericProfile(name);
}
