/**
 * Where `crow skills` installs: the project scope (`<project>/.agents/skills`, lockfile `<project>/skills-lock.json`)
 * or the global one (`~/.agents/skills`, lockfile `~/.agents/skills-lock.json`). Without --project or --global, the
 * project scope when the current directory is inside a git repository (its top level is the project), else global.
 */
import { existsSync } from "node:fs";
import { realpath } from "node:fs/promises";
import path from "node:path";
import { projectRoot } from "@crow/core/internal";
import { homeDir } from "../config/home.js";

export interface Scope {
  kind: "project" | "global";
  /** The project root, or the user's home. */
  base: string;
  skillsDir: string;
  lockFile: string;
}

export function projectScope(root: string): Scope {
  return {
    kind: "project",
    base: root,
    skillsDir: path.join(root, ".agents", "skills"),
    lockFile: path.join(root, "skills-lock.json"),
  };
}

export function globalScope(env: NodeJS.ProcessEnv): Scope {
  const home = homeDir(env);
  return {
    kind: "global",
    base: home,
    skillsDir: path.join(home, ".agents", "skills"),
    lockFile: path.join(home, ".agents", "skills-lock.json"),
  };
}

/** The scope the flags ask for (see the module comment). */
export async function resolveScope(
  flags: { project?: boolean; global?: boolean },
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<Scope> {
  if (flags.global) return globalScope(env);
  // The root trust is decided at (core's trust store): the git top level, else the directory itself.
  const root = await projectRoot(cwd);
  if (flags.project) return projectScope(root);
  const inRepository = existsSync(path.join(root, ".git"));
  return inRepository && root !== (await realpath(homeDir(env)).catch(() => ""))
    ? projectScope(root)
    : globalScope(env);
}
