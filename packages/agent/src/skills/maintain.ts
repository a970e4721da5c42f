/**
 * `crow skills update [NAME]`, `crow skills install` and `crow skills remove NAME`: what the lockfile records, moved
 * to the newest ref, reproduced exactly, or taken away.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { removeTreeAt } from "@crow/core";
import { installSkill, short } from "./add.js";
import { skillNameProblem } from "./checks.js";
import { confirmRuns, fetchOptions, Refused, refuseInvalid, type SkillsContext } from "./context.js";
import { type FoundSkill, inspect } from "./discover.js";
import { describeChanges, diffFiles, digestFolder, secretInodes } from "./files.js";
import { inSkillsFolder } from "./folder.js";
import { audit, type LockEntry, readLock, writeLock } from "./lock.js";
import type { Scope } from "./scope.js";
import { type FetchedSource, fetchSource, specFromLock } from "./sources.js";

/** Fetches a locked skill's source (at `exact`, or its ref's newest) and reads the skill at its recorded path. */
async function fetchLocked(context: SkillsContext, name: string, entry: LockEntry, exact?: string) {
  const spec = specFromLock(entry.sourceType, entry.source, entry.ref);
  const fetched = await fetchSource(spec, { ...(await fetchOptions(context)), ...(exact ? { exact } : {}) });
  const dir = path.join(fetched.top, ...entry.path.split("/").filter(Boolean));
  if (!existsSync(path.join(dir, "SKILL.md"))) {
    await fetched.dispose();
    throw new Refused(`${name}: ${entry.path || "the source"} has no SKILL.md in ${entry.source} any more`, 1);
  }
  const skill: FoundSkill = { ...(await inspect(dir, fetched)), name };
  return { fetched, skill };
}

function lockedNames(lockFile: string, skills: Record<string, LockEntry>, name: string | undefined): string[] {
  if (name === undefined) return Object.keys(skills).sort();
  if (!skills[name]) {
    const known = Object.keys(skills).sort().join(", ") || "none";
    throw new Refused(`${name} is not in ${lockFile} (locked: ${known})`, 2);
  }
  return [name];
}

export async function runUpdate(context: SkillsContext, scope: Scope, name: string | undefined, yes: boolean) {
  const lock = await readLock(scope.lockFile);
  const names = lockedNames(scope.lockFile, lock.skills, name);
  if (names.length === 0) context.out(`no skills locked in ${scope.lockFile}`);
  for (const skillName of names) {
    const entry = lock.skills[skillName] as LockEntry;
    const { fetched, skill } = await fetchLocked(context, skillName, entry);
    try {
      const fresh = await digestFolder(skill.dir, await secretInodes(context.home));
      // A source without a commit or version (a local folder) is named by its content's digest.
      const from = entry.resolved ? short(entry.resolved) : `sha256 ${short(entry.computedHash)}`;
      const to = fetched.resolved ? short(fetched.resolved) : `sha256 ${short(fresh.digest)}`;
      if (fresh.digest === entry.computedHash) {
        context.out(`${skillName}: up to date (${to})`);
        continue;
      }
      refuseInvalid(context, [skill]);
      await confirmRuns(context, [skill], yes);
      const installed = await installSkill(context, scope, lock, skill, "update");
      await writeLock(scope.lockFile, lock);
      context.out(`${skillName}: ${from} → ${to}: ${describeChanges(diffFiles(entry.files, installed.files))}`);
    } finally {
      await fetched.dispose();
    }
  }
  return 0;
}

/**
 * Reproduces the lockfile: every skill fetched at its recorded commit or version and checked against its digest
 * first; any mismatch refuses the whole install (naming the files that differ), so nothing half-installs.
 */
export async function runInstall(context: SkillsContext, scope: Scope, yes: boolean) {
  const lock = await readLock(scope.lockFile);
  const names = Object.keys(lock.skills).sort();
  if (names.length === 0) {
    context.out(`no skills locked in ${scope.lockFile}`);
    return 0;
  }
  const ready: { fetched: FetchedSource; skill: FoundSkill }[] = [];
  const secrets = await secretInodes(context.home);
  try {
    const mismatches: string[] = [];
    for (const name of names) {
      const entry = lock.skills[name] as LockEntry;
      const got = await fetchLocked(context, name, entry, entry.resolved);
      ready.push(got);
      const fresh = await digestFolder(got.skill.dir, secrets);
      if (fresh.digest !== entry.computedHash) {
        mismatches.push(
          `${name}: sha256 ${short(fresh.digest)}, locked ${short(entry.computedHash)}: ${describeChanges(diffFiles(entry.files, fresh.files))}`,
        );
      }
    }
    if (mismatches.length > 0) {
      for (const line of mismatches) context.err(line);
      throw new Refused(`the sources no longer match ${scope.lockFile}: refused, nothing installed`, 1);
    }
    const skills = ready.map((r) => r.skill);
    refuseInvalid(context, skills);
    await confirmRuns(context, skills, yes);
    for (const { skill } of ready) {
      const digest = await installSkill(context, scope, lock, skill, "install");
      context.out(`installed ${skill.name} (${scope.kind}), sha256 ${short(digest.digest)}`);
    }
    await writeLock(scope.lockFile, lock);
    return 0;
  } finally {
    for (const { fetched } of ready) await fetched.dispose();
  }
}

/** Removes the skill `name` (a skill name, else exit 2) of `scope` and its lock entry, beneath the skills folder. */
export async function runRemove(context: SkillsContext, scope: Scope, name: string) {
  const nameWhy = skillNameProblem(name);
  if (nameWhy) throw new Refused(`${nameWhy}; give the name crow skills list shows`, 2);
  const lock = await readLock(scope.lockFile);
  const dir = path.join(scope.skillsDir, name);
  const locked = lock.skills[name];
  const removed = await inSkillsFolder(scope, false, (skills) => removeTreeAt(skills, name));
  if (!locked && !removed) {
    throw new Refused(`no skill ${name} in ${scope.skillsDir} (${scope.kind}); see crow skills list`, 2);
  }
  if (locked) {
    delete lock.skills[name];
    await writeLock(scope.lockFile, lock);
  }
  await audit(context.home, {
    action: "remove",
    name,
    scope: scope.kind,
    dir,
    ...(locked ? { source: locked.source, previousDigest: locked.computedHash } : {}),
  });
  context.out(`removed ${name} (${scope.kind}) from ${dir}`);
  return 0;
}
