/**
 * `skills-lock.json`, in the `skills` CLI's format (`{"version": 1, "skills": {"<name>": {source, ref?, sourceType,
 * computedHash}}}`, skills sorted by name) plus Crow's own fields per skill: `resolved` (the commit or version
 * fetched), `path` (the skill's folder inside the source) and `files` (each file's sha256, so a mismatch can name the
 * files). Also the append-only audit log of installs, updates and removals. See docs/skills.md.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { SourceError } from "./errors.js";

/** One locked skill. */
export interface LockEntry {
  source: string;
  ref?: string;
  sourceType: string;
  /** sha256 (hex) of the folder (see files.ts `digestFolder`), the `skills` CLI's `computedHash`. */
  computedHash: string;
  resolved?: string;
  path: string;
  files: Record<string, string>;
}

export interface Lockfile {
  version: 1;
  skills: Record<string, LockEntry>;
}

/** Reads the lockfile at `file`; a missing one is empty, a broken one an error saying so (never overwritten). */
export async function readLock(file: string): Promise<Lockfile> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return { version: 1, skills: {} };
    throw error;
  }
  let parsed: { version?: unknown; skills?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (error) {
    throw new SourceError(`${file} is not valid JSON (${(error as Error).message}); fix or delete it`);
  }
  if (parsed.version !== 1 || typeof parsed.skills !== "object" || parsed.skills === null) {
    throw new SourceError(
      `${file} is not a version 1 skills-lock.json ({"version": 1, "skills": {…}}); fix or delete it`,
    );
  }
  return parsed as Lockfile;
}

/** Writes `lock` to `file` atomically (a temporary file renamed over it), skills sorted by name. */
export async function writeLock(file: string, lock: Lockfile): Promise<void> {
  const skills: Record<string, LockEntry> = {};
  for (const name of Object.keys(lock.skills).sort()) {
    const entry = lock.skills[name] as LockEntry;
    skills[name] = {
      source: entry.source,
      ...(entry.ref ? { ref: entry.ref } : {}),
      sourceType: entry.sourceType,
      computedHash: entry.computedHash,
      ...(entry.resolved ? { resolved: entry.resolved } : {}),
      path: entry.path,
      files: entry.files,
    };
  }
  await mkdir(path.dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify({ version: 1, skills }, null, 2)}\n`);
  await rename(temp, file);
}

/** One line of `<crow home>/skills-audit.log` (JSON lines, append-only). */
export interface AuditRecord {
  action: "add" | "update" | "install" | "remove";
  name: string;
  scope: string;
  dir: string;
  source?: string;
  resolved?: string;
  digest?: string;
  previousDigest?: string;
}

/** Appends `record` (with the time) to the audit log under `home`. */
export async function audit(home: string, record: AuditRecord): Promise<void> {
  await mkdir(home, { recursive: true });
  const line = JSON.stringify({ at: new Date().toISOString(), ...record });
  await appendFile(path.join(home, "skills-audit.log"), `${line}\n`, { mode: 0o600 });
}
