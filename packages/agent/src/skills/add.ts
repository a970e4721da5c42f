/**
 * `crow skills add SOURCE`: fetch, discover, select, validate, gate what runs, then install each skill as one
 * folder copy and record it (lockfile + audit log). Also the install step `update` and `install` share.
 */
import path from "node:path";
import { isProjectTrusted } from "@crow/core";
import { skillNameProblem } from "./checks.js";
import { confirmRuns, fetchOptions, Refused, refuseInvalid, type SkillsContext, selectSkills } from "./context.js";
import { type Discovery, discoverSkills, type FoundSkill } from "./discover.js";
import { SourceError } from "./errors.js";
import { digestFolder, type FolderDigest, installFolder, secretInodes } from "./files.js";
import { inSkillsFolder } from "./folder.js";
import { audit, type LockEntry, type Lockfile, readLock, writeLock } from "./lock.js";
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
  for (const note of discovery.notes) context.err(note);
  return { discovery, dispose };
}

export async function runAdd(context: SkillsContext, options: AddOptions): Promise<number> {
  const spec = parseSource(options.source, context.cwd);
  const fetched = await fetchSource(spec, await fetchOptions(context));
  const { discovery, dispose } = await openSource(context, fetched);
  try {
    const chosen = await selectSkills(context, discovery.skills, options.skills, options.all);
    refuseInvalid(context, chosen);
    // Every file read once before anything is installed: a hard link to a secret refuses them all.
    const secrets = await secretInodes(context.home);
    for (const skill of chosen) await digestFolder(skill.dir, secrets);
    await confirmRuns(context, chosen, options.yes);
    const lock = await readLock(options.scope.lockFile);
    for (const skill of chosen) {
      await installSkill(context, options.scope, lock, skill, "add");
      // Locked as soon as installed: a later failure leaves no installed skill unrecorded.
      await writeLock(options.scope.lockFile, lock);
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
    return 0;
  } finally {
    await dispose();
  }
}

/** The lockfile entry of `skill` as fetched, with its installed digest. */
export function lockEntry(skill: FoundSkill, digest: FolderDigest): LockEntry {
  const spec = skill.from.spec;
  return {
    source: spec.source,
    ...(spec.ref ? { ref: spec.ref } : {}),
    sourceType: spec.type,
    computedHash: digest.digest,
    ...(skill.from.resolved ? { resolved: skill.from.resolved } : {}),
    path: skill.path,
    files: digest.files,
  };
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
  const previous = lock.skills[skill.name];
  for (const link of skill.links) context.err(`skill ${skill.name}: ${link} is a link; not installed`);
  const secrets = await secretInodes(context.home);
  const digest = await inSkillsFolder(scope, true, (dir) => installFolder(skill.dir, dir, skill.name, secrets));
  if (!digest) throw new SourceError(`${scope.skillsDir} could not be made`);
  lock.skills[skill.name] = lockEntry(skill, digest);
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
