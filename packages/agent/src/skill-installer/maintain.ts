/**
 * `crow skills update [NAME]`, `crow skills install` and `crow skills remove NAME`: what the lockfile records, moved
 * to the newest ref, reproduced exactly, or taken away.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { removeTreeAt } from "@crow/core/internal";
import { installSkill, keysOf, openSource, short } from "./add.js";
import { skillNameProblem } from "./checks.js";
import { confirmRuns, fetchOptions, installable, Refused, type SkillsContext } from "./context.js";
import { type FoundSkill, inspect, walkSkills } from "./discover.js";
import { SourceError } from "./errors.js";
import { describeChanges, diffFiles, digestFolder, secretInodes } from "./files.js";
import { inSkillsFolder } from "./folder.js";
import { audit, type LockEntry, readLock, skillFolder, writeLock } from "./lock.js";
import { folderName } from "./names.js";
import type { Scope } from "./scope.js";
import { type FetchedSource, fetchSource, specFromLock } from "./sources.js";

/** A locked skill's source fetched and the skill read from it; `dispose` removes every temporary folder. */
interface Locked {
  fetched: FetchedSource;
  skill: FoundSkill;
  dispose(): Promise<void>;
}

/**
 * Fetches a locked skill's source (at `exact`, or its ref's newest) and reads the skill: at its `skillPath`, or (an
 * entry without one, as the CLI writes for local sources) the skill of the source whose name is the entry's key.
 * The skill keeps the key as its declared name and installs in the key's folder (names.ts).
 */
async function fetchLocked(
  context: SkillsContext,
  key: string,
  entry: LockEntry,
  lockFile: string,
  exact?: string,
): Promise<Locked> {
  const named = folderName(key);
  if ("refused" in named) throw new Refused(named.refused, 1);
  const spec = specFromLock(entry, path.dirname(lockFile));
  const fetched = await fetchSource(spec, { ...(await fetchOptions(context)), ...(exact ? { exact } : {}) });
  const folder = skillFolder(entry);
  let found: FoundSkill | undefined;
  let dispose = () => fetched.dispose();
  try {
    if (folder !== undefined) {
      const dir = path.join(fetched.top, ...folder.split("/").filter(Boolean));
      if (existsSync(path.join(dir, "SKILL.md"))) found = await inspect(dir, fetched);
    } else {
      // As the CLI restores it: the skill of that name, among the source's skills or anywhere in its tree.
      const opened = await openSource(context, fetched);
      dispose = opened.dispose;
      const match = (s: FoundSkill) => s.name === named.name || s.declared === key;
      found = opened.discovery.skills.find(match) ?? (await walkSkills(fetched)).find(match);
    }
  } catch (error) {
    await dispose();
    throw error;
  }
  if (!found) {
    await dispose();
    const where = folder === undefined ? `a skill named ${key}` : `${folder || "the source"}/SKILL.md`;
    throw new Refused(`${key}: ${where} is no longer in ${entry.sourceUrl ?? entry.source}`, 1);
  }
  return { fetched, skill: { ...found, name: named.name, declared: key }, dispose };
}

function lockedNames(lockFile: string, skills: Record<string, LockEntry>, name: string | undefined): string[] {
  if (name === undefined) return Object.keys(skills).sort();
  const keys = Object.keys(skills).filter((key) => {
    const named = folderName(key);
    return key === name || ("name" in named && named.name === name);
  });
  if (keys.length === 0) {
    const known = Object.keys(skills).sort().join(", ") || "none";
    throw new Refused(`${name} is not in ${lockFile} (locked: ${known})`, 2);
  }
  return keys;
}

/**
 * Moves each locked skill (or the one named) to the newest commit or version of its ref. One that cannot be updated
 * (deleted upstream, a source gone) is reported and kept as it is, and the others still update; the exit code is 1
 * when any could not. `resolved` moves even when the skill's files did not change.
 */
export async function runUpdate(context: SkillsContext, scope: Scope, name: string | undefined, yes: boolean) {
  const lock = await readLock(scope.lockFile);
  const names = lockedNames(scope.lockFile, lock.skills, name);
  if (names.length === 0) context.out(`no skills locked in ${scope.lockFile}`);
  let failed = 0;
  for (const key of names) {
    const entry = lock.skills[key] as LockEntry;
    let locked: Locked;
    try {
      locked = await fetchLocked(context, key, entry, scope.lockFile);
    } catch (error) {
      if (!(error instanceof Refused) && !(error instanceof SourceError)) throw error;
      failed++;
      const why = error.message.startsWith(`${key}: `) ? error.message.slice(key.length + 2) : error.message;
      context.err(`${key}: not updated: ${why}; kept as installed (crow skills remove ${folderOf(key)} removes it)`);
      continue;
    }
    const { fetched, skill } = locked;
    try {
      const fresh = await digestFolder(skill.dir, await secretInodes(context.home));
      // A source without a commit or version (a local folder) is named by its content's digest.
      const from = entry.resolved ? short(entry.resolved) : `sha256 ${short(entry.computedHash)}`;
      const to = fetched.resolved ? short(fetched.resolved) : `sha256 ${short(fresh.digest)}`;
      if (fresh.digest === entry.computedHash) {
        if (fetched.resolved && entry.resolved !== fetched.resolved) {
          entry.resolved = fetched.resolved;
          await writeLock(scope.lockFile, lock);
          context.out(`${key}: up to date (no file changed; ${from} → ${to})`);
        } else context.out(`${key}: up to date (${to})`);
        continue;
      }
      installable(context, [skill]);
      await confirmRuns(context, [skill], yes);
      const installed = await installSkill(context, scope, lock, skill, "update");
      await writeLock(scope.lockFile, lock);
      const changes = entry.files ? describeChanges(diffFiles(entry.files, installed.files)) : "files changed";
      context.out(`${key}: ${from} → ${to}: ${changes}`);
    } finally {
      await locked.dispose();
    }
  }
  return failed > 0 ? 1 : 0;
}

function folderOf(key: string): string {
  const named = folderName(key);
  return "name" in named ? named.name : key;
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
  const ready: Locked[] = [];
  const secrets = await secretInodes(context.home);
  try {
    const mismatches: string[] = [];
    for (const name of names) {
      const entry = lock.skills[name] as LockEntry;
      const got = await fetchLocked(context, name, entry, scope.lockFile, entry.resolved);
      ready.push(got);
      const fresh = await digestFolder(got.skill.dir, secrets);
      if (fresh.digest !== entry.computedHash) {
        const changes = entry.files ? describeChanges(diffFiles(entry.files, fresh.files)) : "the files differ";
        mismatches.push(`${name}: sha256 ${short(fresh.digest)}, locked ${short(entry.computedHash)}: ${changes}`);
      }
    }
    if (mismatches.length > 0) {
      for (const line of mismatches) context.err(line);
      throw new Refused(`the sources no longer match ${scope.lockFile}: refused, nothing installed`, 1);
    }
    const skills = installable(
      context,
      ready.map((r) => r.skill),
    );
    if (skills.length < ready.length) {
      throw new Refused(`some locked skills cannot be installed (see above): refused, nothing installed`, 1);
    }
    await confirmRuns(context, skills, yes);
    for (const { skill } of ready) {
      const digest = await installSkill(context, scope, lock, skill, "install");
      context.out(`installed ${skill.name} (${scope.kind}), sha256 ${short(digest.digest)}`);
    }
    await writeLock(scope.lockFile, lock);
    return 0;
  } finally {
    for (const got of ready) await got.dispose();
  }
}

/** Removes the skill `name` (a skill name, else exit 2) of `scope` and its lock entry, beneath the skills folder. */
export async function runRemove(context: SkillsContext, scope: Scope, name: string) {
  const nameWhy = skillNameProblem(name);
  if (nameWhy) throw new Refused(`${nameWhy}; give the name crow skills list shows`, 2);
  const lock = await readLock(scope.lockFile);
  const dir = path.join(scope.skillsDir, name);
  const keys = keysOf(lock, name);
  const locked = keys.map((key) => lock.skills[key]).find((entry) => entry !== undefined);
  const removed = await inSkillsFolder(scope, false, (skills) => removeTreeAt(skills, name));
  if (!locked && !removed) {
    throw new Refused(`no skill ${name} in ${scope.skillsDir} (${scope.kind}); see crow skills list`, 2);
  }
  if (locked) {
    for (const key of keys) delete lock.skills[key];
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
