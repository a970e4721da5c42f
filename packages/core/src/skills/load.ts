/**
 * Skill discovery: every `<root>/<folder>/SKILL.md` of the skill roots, validated, with the folder's other files.
 * Never throws; unreadable roots, invalid frontmatter and overrides come back as problems with their paths.
 */
import { createHash } from "node:crypto";
import type { Dirent } from "node:fs";
import { readdir, realpath } from "node:fs/promises";
import path from "node:path";
import { errorText } from "../error-text.js";
import { exists } from "../exists.js";
import { readInside } from "../fs-beneath.js";
import { crowHome, homeDir } from "../home.js";
import type { LoadedSkills, Skill, SkillProblem } from "./types.js";

/** Files listed per skill at most; a skill shipping a whole dataset should not flood `get_skill_details`. */
const MAX_FILES = 200;
/**
 * Bytes of a SKILL.md read at most: far above what the spec advises (under 5000 tokens of body), low enough that a
 * planted huge file costs nothing. A larger one is not loaded (a cut-off skill would be wrong instructions).
 */
export const MAX_SKILL_BYTES = 1024 * 1024;
/** Folders never listed among a skill's files. */
const SKIPPED_DIRS = new Set(["node_modules", "__pycache__", ".git", ".venv", "venv"]);

/** A skill root whose folders must stay inside `within` (a real path): one linking elsewhere is not loaded. */
export interface SkillRoot {
  dir: string;
  within?: string;
}

/** Where skills are looked for, in override order. */
export interface SkillRootsOptions {
  /** The session's workspace; without it only the user's skills are used. */
  workspace?: string;
  /** The Crow home directory (default `CROW_HOME`, else `~/.crow`). */
  home?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The skill roots, lowest priority first: the user's `~/.agents/skills` (the folder other agents read too) and
 * `<crow home>/skills`, then the project's `<workspace>/.crow/skills` and `<workspace>/.agents/skills` (see
 * {@link userSkillRoots}, {@link projectSkillRoots}). A skill in a later root overrides one of the same name in an
 * earlier root, so a project can replace a user-wide skill (reported as an `info` problem). Project roots are offered
 * to the model only when the project is trusted (`loadSessionSkills`).
 */
export function skillRoots(options: SkillRootsOptions = {}): string[] {
  return [...userSkillRoots(options), ...(options.workspace ? projectSkillRoots(options.workspace) : [])];
}

/** The user's skill roots, lowest priority first: `~/.agents/skills` (HOME), then `<crow home>/skills`. */
export function userSkillRoots(options: Omit<SkillRootsOptions, "workspace"> = {}): string[] {
  const env = options.env ?? process.env;
  const home = options.home ?? crowHome(env);
  return [path.join(homeDir(env), ".agents", "skills"), path.join(home, "skills")];
}

/** A project's skill roots, lowest priority first: `<workspace>/.crow/skills`, `<workspace>/.agents/skills`. */
export function projectSkillRoots(workspace: string): string[] {
  return [path.join(workspace, ".crow", "skills"), path.join(workspace, ".agents", "skills")];
}

/**
 * Loads the skills of `roots` (see {@link skillRoots}; missing roots are fine). Skills are sorted by name; when two
 * roots hold the same name, the later root wins. Invalid skills are skipped with an `error` problem, repairable ones
 * loaded with a `warning`.
 */
export async function loadSkills(roots: readonly (string | SkillRoot)[]): Promise<LoadedSkills> {
  const problems: SkillProblem[] = [];
  const byName = new Map<string, Skill>();
  for (const root of roots) {
    const { dir, within } = typeof root === "string" ? { dir: root } : root;
    const found = await loadRoot(path.resolve(dir), within, problems);
    for (const skill of found) {
      const earlier = byName.get(skill.name);
      if (earlier) {
        problems.push({
          severity: "info",
          path: skill.file,
          message: `skill "${skill.name}" overrides the one in ${earlier.dir}`,
        });
      }
      byName.set(skill.name, skill);
    }
  }
  const skills = [...byName.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return { skills, problems };
}

async function loadRoot(root: string, within: string | undefined, problems: SkillProblem[]): Promise<Skill[]> {
  let entries: Dirent[];
  try {
    if (within && !(await inside(root, within))) {
      problems.push({ severity: "error", path: root, message: `links outside ${within}; not loaded` });
      return [];
    }
    entries = await readdir(root, { withFileTypes: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== "ENOENT" && code !== "ENOTDIR") {
      problems.push({ severity: "warning", path: root, message: `cannot read the skills folder: ${errorText(error)}` });
    }
    return [];
  }
  const folders = entries.filter((e) => !e.name.startsWith(".") && (e.isDirectory() || e.isSymbolicLink()));
  const loaded = await Promise.all(
    folders.map(async (e) => {
      // A dangling link loads nothing anyway (loadSkill reads no SKILL.md through it).
      if (within && !(await inside(path.join(root, e.name), within).catch(() => true))) {
        problems.push({
          severity: "error",
          path: path.join(root, e.name),
          message: `links outside ${within}; not loaded`,
        });
        return undefined;
      }
      return loadSkill(root, e.name, within, problems);
    }),
  );
  return loaded.filter((s): s is Skill => s !== undefined);
}

async function loadSkill(
  root: string,
  folder: string,
  within: string | undefined,
  problems: SkillProblem[],
): Promise<Skill | undefined> {
  const dir = path.join(root, folder);
  const file = path.join(dir, "SKILL.md");
  // Read as AGENTS.md is (fs-beneath.ts `readInside`): only a regular file, checked on the open descriptor, opened
  // without blocking and size-capped. Anything that can write a skills folder can leave a FIFO there (which held
  // every later session start) or a link to /dev/zero. A project's skill must also stay inside the project.
  let read: Awaited<ReturnType<typeof readInside>>;
  try {
    read = await readInside(within ?? "/", file, MAX_SKILL_BYTES + 1);
  } catch (error) {
    problems.push({ severity: "error", path: file, message: `cannot read: ${errorText(error)}` });
    return undefined;
  }
  if (read === undefined) {
    // There but not to be opened (no permission): say so. A folder without SKILL.md is not a skill (or a symlink to a
    // file); only say so when it looks like one.
    if (await exists(file)) {
      problems.push({ severity: "error", path: file, message: "cannot read: it could not be opened" });
    } else if (await exists(path.join(dir, "skill.md"))) {
      problems.push({ severity: "error", path: dir, message: "the file must be named SKILL.md (upper case)" });
    }
    return undefined;
  }
  if ("refused" in read) {
    problems.push({ severity: "error", path: file, message: `not read: ${read.refused}; a skill is a regular file` });
    return undefined;
  }
  if (read.info.size > MAX_SKILL_BYTES || read.bytes.length > MAX_SKILL_BYTES) {
    problems.push({
      severity: "error",
      path: file,
      message: `not read: ${read.info.size} bytes, more than the ${MAX_SKILL_BYTES / 1024 / 1024} MiB a SKILL.md may hold`,
    });
    return undefined;
  }
  const content = read.bytes.toString("utf8");
  // The YAML parser loads with the first SKILL.md: a workspace without skills never needs it.
  const { parseSkill } = await import("./frontmatter.js");
  const parsed = parseSkill(content, folder);
  for (const message of parsed.errors) problems.push({ severity: "error", path: file, message });
  for (const message of parsed.warnings) problems.push({ severity: "warning", path: file, message });
  for (const message of parsed.notes ?? []) problems.push({ severity: "info", path: file, message });
  if (!parsed.metadata) return undefined;
  const files = await listFiles(dir);
  if (files.length > MAX_FILES) {
    problems.push({
      severity: "warning",
      path: dir,
      message: `${files.length} files; only the first ${MAX_FILES} are listed`,
    });
  }
  return {
    ...parsed.metadata,
    content,
    hash: createHash("sha256").update(content).digest("hex"),
    dir,
    file,
    files: files.slice(0, MAX_FILES),
    root,
  };
}

/** The folder's files except SKILL.md, relative POSIX paths, sorted; hidden and tooling folders skipped. */
async function listFiles(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(rel: string, depth: number): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(path.join(dir, rel), { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".") || out.length > MAX_FILES) continue;
      const child = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name) && depth < 6) await walk(child, depth + 1);
      } else if (child !== "SKILL.md") {
        out.push(child);
      }
    }
  }
  await walk("", 0);
  return out.sort();
}

/** Whether `p`'s real path is `dir` or below it (`dir` is a real path). A missing `p` is not inside. */
async function inside(p: string, dir: string): Promise<boolean> {
  const real = await realpath(p);
  return real === dir || real.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
}
