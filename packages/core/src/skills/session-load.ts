/**
 * The skills one session is offered: the user's roots always, the project's only when the project is trusted
 * (`crow skills trust`), and then only the skill folders whose real path stays inside the project (a trusted
 * repository's `.agents` linking to some other folder does not carry the trust there).
 */
import path from "node:path";
import { loadSkills, projectSkillRoots, type SkillRoot, userSkillRoots } from "./load.js";
import { isProjectTrusted, projectRoot } from "./trust.js";
import type { LoadedSkills } from "./types.js";

/** Options of {@link loadSessionSkills}. */
export interface SessionSkillsOptions {
  /** The session's workspace; its `.crow/skills` and `.agents/skills` are project roots. */
  workspace?: string;
  /** The Crow home: `<home>/skills` and the trust store. */
  home: string;
  /** Extra user roots (absolute), after `<home>/skills` and before the project's. */
  dirs?: readonly string[];
  env?: NodeJS.ProcessEnv;
}

/** The skills offered, and what an untrusted project held back. */
export interface SessionSkills extends LoadedSkills {
  /** Set when the project is not trusted and has skills: its root and how many skills were left out. */
  untrusted?: { root: string; count: number };
}

/**
 * Loads the skills of a session, lowest priority first: `~/.agents/skills`, `<home>/skills`, `dirs`, then (trusted
 * projects only) `<workspace>/.crow/skills` and `<workspace>/.agents/skills`. Never throws.
 */
export async function loadSessionSkills(options: SessionSkillsOptions): Promise<SessionSkills> {
  const user = [...userSkillRoots({ home: options.home, ...(options.env ? { env: options.env } : {}) })];
  user.push(...(options.dirs ?? []));
  if (!options.workspace) return loadSkills(user);
  // A workspace whose project folder is a user root (a session in HOME) reads it once, as the user's.
  const resolvedUser = new Set(user.map((dir) => path.resolve(dir)));
  const projectDirs = projectSkillRoots(options.workspace).filter((dir) => !resolvedUser.has(path.resolve(dir)));
  let root: string;
  try {
    root = await projectRoot(options.workspace);
  } catch {
    return loadSkills(user);
  }
  if (await isProjectTrusted(root, { home: options.home })) {
    const project: SkillRoot[] = projectDirs.map((dir) => ({ dir, within: root }));
    return loadSkills([...user, ...project]);
  }
  const [offered, held] = await Promise.all([loadSkills(user), loadSkills(projectDirs)]);
  return held.skills.length > 0 ? { ...offered, untrusted: { root, count: held.skills.length } } : offered;
}
