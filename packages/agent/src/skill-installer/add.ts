/**
 * `crow skills add SOURCE`: fetch, discover, select, validate, gate what runs, then install each skill as one
 * folder copy and record it (lockfile + audit log). Also the install step `update` and `install` share.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { isProjectTrusted } from "@crow/core";
import { skillNameProblem } from "./checks.js";
import {
  askYes,
  confirmRuns,
  fetchOptions,
  installable,
  Refused,
  type SkillsContext,
  selectSkills,
} from "./context.js";
import { type Discovery, discoverSkills, type FoundSkill } from "./discover.js";
import { SourceError } from "./errors.js";
import { digestFolder, type FolderDigest, installFolder, secretInodes } from "./files.js";
import { inSkillsFolder } from "./folder.js";
import { audit, type LockEntry, type Lockfile, readLock, writeLock } from "./lock.js";
import { folderName } from "./names.js";
import type { Scope } from "./scope.js";
import { type FetchedSource, fetchSource, parseSource } from "./sources.js";

export interface AddOptions {
  source: string;
  scope: Scope;
  skills: string[];
  all: boolean;
  yes: boolean;
}

/** A source fetched and its skills discovered; `dispose` removes every temporary folder. */
export async function openSource(
  context: SkillsContext,
  fetched: FetchedSource,
): Promise<{ discovery: Discovery; dispose(): Promise<void> }> {
  const dispose = async () => {
    await fetched.dispose();
    for (const extra of discovery?.extra ?? []) await extra.dispose();
  };
  let discovery: Discovery | undefined;
  try {
    discovery = await discoverSkills(fetched, await fetchOptions(context));
  } catch (error) {
    await dispose();
    throw error;
  }
  if (fetched.note) context.err(fetched.note);
  for (const note of discovery.notes) context.err(note);
  return { discovery, dispose };
}

export async function runAdd(context: SkillsContext, options: AddOptions): Promise<number> {
  const spec = parseSource(options.source, context.cwd);
  const fetched = await fetchSource(spec, await fetchOptions(context));
  const { discovery, dispose } = await openSource(context, fetched);
  try {
    const names = options.skills.length > 0 ? options.skills : spec.skill ? [spec.skill] : [];
    const wanted = spec.skill?.toLowerCase();
    if (
      options.skills.length === 0 &&
      wanted &&
      !discovery.skills.some((s) => [s.name, s.declared, path.basename(s.dir)].some((n) => n.toLowerCase() === wanted))
    ) {
      throw new Refused(
        `no skill named ${spec.skill} in ${spec.source} (it has: ${discovery.skills.map((s) => s.name).join(", ")}); ` +
          `owner/repo@name names a skill, as the skills CLI reads it: for the branch or tag ${spec.skill} write ${spec.source}#${spec.skill}`,
        2,
      );
    }
    const chosen = await selectSkills(context, discovery.skills, names, options.all);
    const ready = installable(context, chosen);
    // Every file read once before anything is installed: a hard link to a secret refuses them all.
    const secrets = await secretInodes(context.home);
    for (const skill of ready) await digestFolder(skill.dir, secrets);
    await confirmRuns(context, ready, options.yes);
    const lock = await readLock(options.scope.lockFile);
    await confirmOverwrites(context, options.scope, lock, ready, options.yes);
    for (const skill of ready) {
      await installSkill(context, options.scope, lock, skill, "add");
      // Locked as soon as installed: a later failure leaves no installed skill unrecorded.
      await writeLock(options.scope.lockFile, lock);
    }
    if (ready.length < chosen.length) {
      context.err(`installed ${ready.length} of ${chosen.length}; the others are listed above with the reason`);
    }
    // Installed but not offered yet: project skills reach the model only in a trusted project (core's trust store).
    if (
      options.scope.kind === "project" &&
      !(await isProjectTrusted(options.scope.base, { home: context.home, env: context.env }))
    ) {
      context.err(
        `this project (${options.scope.base}) is not trusted yet: its skills stay unused until you run \`crow skills trust\` here`,
      );
    }
    // A skill asked for by name that could not be installed is a failure; with --all the others are reported.
    return ready.length < chosen.length && options.skills.length > 0 ? 1 : 0;
  } finally {
    await dispose();
  }
}

/**
 * The lockfile entry of `skill` as fetched, with its installed digest: the `skills` CLI's fields (`sourceUrl` for a
 * git source, `skillPath`) and Crow's (`resolved`, `files`).
 */
export function lockEntry(skill: FoundSkill, digest: FolderDigest): LockEntry {
  const spec = skill.from.spec;
  return {
    source: spec.source,
    ...(spec.type === "git" || spec.type === "gitlab" ? { sourceUrl: spec.location } : {}),
    ...(spec.ref ? { ref: spec.ref } : {}),
    sourceType: spec.type,
    skillPath: skill.path ? `${skill.path}/SKILL.md` : "SKILL.md",
    computedHash: digest.digest,
    ...(skill.from.resolved ? { resolved: skill.from.resolved } : {}),
    files: digest.files,
  };
}

/**
 * The gate before a skill replaces another: an installed folder that the lockfile does not record (hand-written, or
 * installed by another tool without a lock) or that it records from another source (or another skill of the same
 * source) is named with what replaces it, and needs `--yes` or a yes on the terminal (exit 2 without either, 1 on a
 * no). Reinstalling a skill from the source it was locked from asks nothing.
 */
export async function confirmOverwrites(
  context: SkillsContext,
  scope: Scope,
  lock: Lockfile,
  skills: readonly FoundSkill[],
  yes: boolean,
): Promise<void> {
  const replaced: string[] = [];
  for (const skill of skills) {
    const target = path.join(scope.skillsDir, skill.name);
    const entry = keysOf(lock, skill.name)
      .map((key) => lock.skills[key])
      .find((e) => e !== undefined);
    const spec = skill.from.spec;
    const skillPath = skill.path ? `${skill.path}/SKILL.md` : "SKILL.md";
    if (entry) {
      const same = entry.source === spec.source && (entry.skillPath ?? skillPath) === skillPath;
      if (!same) {
        const was = `${entry.source}${entry.skillPath ? `:${entry.skillPath.replace(/\/?SKILL\.md$/, "") || "."}` : ""}`;
        replaced.push(`${target} (locked from ${was}) would be replaced by ${skill.shown}`);
      }
    } else if (existsSync(target)) {
      replaced.push(
        `${target} (not in ${path.basename(scope.lockFile)}: hand-written or another tool's) would be replaced by ${skill.shown}`,
      );
    }
  }
  if (replaced.length === 0) return;
  for (const line of replaced) context.err(`overwrite: ${line}`);
  if (yes) return;
  const message = `${replaced.length === 1 ? "a skill" : `${replaced.length} skills`} would be replaced (see above)`;
  if (!context.terminal) throw new Refused(`${message}: pass --yes to replace; nothing installed`, 2);
  if (!(await askYes(context, "Replace them? [y/N]"))) throw new Refused("nothing installed", 1);
}

/** The lockfile keys whose skill installs in `folder` (a key is a declared name; names.ts makes it a folder). */
export function keysOf(lock: Lockfile, folder: string): string[] {
  return Object.keys(lock.skills).filter((key) => {
    const named = folderName(key);
    return "name" in named && named.name === folder;
  });
}

/**
 * Installs `skill` into the scope (atomically, beneath the skills folder held open: files.ts, folder.ts), updates
 * `lock` in memory and appends to the audit log. Returns the installed folder's digest. Refuses a name that is not a
 * skill name: it becomes a path.
 */
export async function installSkill(
  context: SkillsContext,
  scope: Scope,
  lock: Lockfile,
  skill: FoundSkill,
  action: "add" | "update" | "install",
): Promise<FolderDigest> {
  const nameWhy = skillNameProblem(skill.name);
  if (nameWhy) throw new SourceError(`refused to install from ${skill.from.spec.source}: ${nameWhy}`);
  const target = path.join(scope.skillsDir, skill.name);
  const keys = keysOf(lock, skill.name);
  const previous = keys.map((key) => lock.skills[key]).find((entry) => entry !== undefined);
  for (const link of skill.links) context.err(`skill ${skill.name}: ${link} is a link; not installed`);
  const prefix = skill.path === "" ? "" : `${skill.path}/`;
  for (const entry of skill.from.skipped ?? []) {
    if (entry.startsWith(prefix)) {
      context.err(`skill ${skill.name}: ${entry.slice(prefix.length)} is a link or not a regular file; not installed`);
    }
  }
  const secrets = await secretInodes(context.home);
  const digest = await inSkillsFolder(scope, true, (dir) => installFolder(skill.dir, dir, skill.name, secrets));
  if (!digest) throw new SourceError(`${scope.skillsDir} could not be made`);
  // One entry per folder, keyed by the declared name as the CLI keys it; fields neither tool knows are kept.
  const kept: Record<string, unknown> = {};
  for (const key of keys) {
    for (const [field, value] of Object.entries(lock.skills[key] ?? {})) {
      if (
        !["source", "sourceUrl", "ref", "sourceType", "skillPath", "computedHash", "resolved", "files"].includes(field)
      )
        kept[field] = value;
    }
    delete lock.skills[key];
  }
  lock.skills[skill.declared] = { ...kept, ...lockEntry(skill, digest) };
  await audit(context.home, {
    action,
    name: skill.name,
    scope: scope.kind,
    dir: target,
    source: skill.from.spec.source,
    ...(skill.from.resolved ? { resolved: skill.from.resolved } : {}),
    digest: digest.digest,
    ...(previous && previous.computedHash !== digest.digest ? { previousDigest: previous.computedHash } : {}),
  });
  if (action === "add") {
    const at = skill.from.resolved ? `@${short(skill.from.resolved)}` : "";
    context.out(
      `installed ${skill.name} (${scope.kind}) from ${skill.from.spec.source}${at} into ${target}, sha256 ${short(digest.digest)}`,
    );
  }
  return digest;
}

/** The first 12 characters of a commit or digest; versions are kept whole. */
export function short(value: string): string {
  return /^(sha256:)?[0-9a-f]{40,}$/.test(value) ? value.replace(/^sha256:/, "").slice(0, 12) : value;
}

export { Refused };
