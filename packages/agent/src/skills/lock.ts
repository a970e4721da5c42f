/**
 * `skills-lock.json`, in the `skills` CLI's format (`{"version": 1, "skills": {"<name>": {source, ref?, sourceType,
 * computedHash}}}`, skills sorted by name) plus Crow's own fields per skill: `resolved` (the commit or version
 * fetched), `path` (the skill's folder inside the source) and `files` (each file's sha256, so a mismatch can name the
 * files). Also the append-only audit log of installs, updates and removals. See docs/skills.md.
 */
import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { putBeneath, readInside } from "@crow/core";
import {
  commitProblem,
  githubRepoProblem,
  gitUrlProblem,
  innerPathProblem,
  optionProblem,
  refProblem,
  skillNameProblem,
} from "./checks.js";
import { SourceError } from "./errors.js";
import { MAX_DOCUMENT_BYTES, mib } from "./limits.js";

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

/**
 * Reads the lockfile at `file`; a missing one is empty, a broken one an error saying so (never overwritten). Every
 * entry is checked (see {@link lockEntryProblem}) before anything uses it: a lockfile is committed to repositories
 * people clone, so its names and values are an attacker's as much as the user's. Read as a regular file only (a FIFO
 * planted at the name cannot hold the command up), at most {@link MAX_DOCUMENT_BYTES}.
 */
export async function readLock(file: string): Promise<Lockfile> {
  const read = await readInside(path.dirname(file), file, MAX_DOCUMENT_BYTES + 1);
  if (!read) return { version: 1, skills: {} };
  if ("refused" in read) throw new SourceError(`${file} was not read: ${read.refused}; fix or delete it`);
  if (read.bytes.length > MAX_DOCUMENT_BYTES) {
    throw new SourceError(`${file} is larger than ${mib(MAX_DOCUMENT_BYTES)} MiB; fix or delete it`);
  }
  const text = read.bytes.toString("utf8");
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
  const lock = parsed as Lockfile;
  for (const [name, entry] of Object.entries(lock.skills)) {
    const problem = lockEntryProblem(name, entry as unknown);
    if (problem) {
      throw new SourceError(
        `${path.basename(file)}: entry '${name}' field ${problem.field}: ${problem.why}; fix or remove the entry (${file})`,
      );
    }
  }
  return lock;
}

const SOURCE_TYPES = ["github", "git", "npm", "local", "well-known"];

/** Which field of the lock entry `name` is refused and why, or undefined when the entry is sound. */
export function lockEntryProblem(name: string, entry: unknown): { field: string; why: string } | undefined {
  const nameWhy = skillNameProblem(name);
  if (nameWhy) return { field: "name", why: nameWhy };
  if (typeof entry !== "object" || entry === null) return { field: "name", why: "the entry is not an object" };
  const e = entry as Record<string, unknown>;
  for (const field of ["source", "sourceType", "computedHash", "path"]) {
    if (typeof e[field] !== "string") return { field, why: "missing or not a string" };
  }
  for (const field of ["ref", "resolved"]) {
    if (e[field] !== undefined && typeof e[field] !== "string") return { field, why: "not a string" };
  }
  if (typeof e.files !== "object" || e.files === null) return { field: "files", why: "missing or not an object" };
  const { source, sourceType, computedHash, path: inner, ref, resolved } = e as unknown as LockEntry;
  if (!SOURCE_TYPES.includes(sourceType)) {
    return { field: "sourceType", why: `"${sourceType}" is not one of ${SOURCE_TYPES.join(", ")}` };
  }
  if (!/^[0-9a-f]{64}$/.test(computedHash))
    return { field: "computedHash", why: "is not a sha256 (64 hex characters)" };
  const innerWhy = innerPathProblem(inner);
  if (innerWhy) return { field: "path", why: innerWhy };
  const git = sourceType === "git" || sourceType === "github";
  const sourceWhy =
    sourceType === "git"
      ? gitUrlProblem(source)
      : sourceType === "github"
        ? githubRepoProblem(source)
        : sourceType === "local"
          ? path.isAbsolute(source)
            ? optionProblem(source)
            : `${JSON.stringify(source)} is not an absolute path`
          : sourceType === "npm"
            ? /^npm:(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(source)
              ? undefined
              : `${JSON.stringify(source)} is not npm:<package name>`
            : /^https?:\/\/\S+$/i.test(source)
              ? undefined
              : `${JSON.stringify(source)} is not an http(s) URL`;
  if (sourceWhy) return { field: "source", why: sourceWhy };
  if (ref !== undefined) {
    const refWhy = git ? refProblem(ref) : optionProblem(ref);
    if (refWhy) return { field: "ref", why: refWhy };
  }
  if (resolved !== undefined) {
    const resolvedWhy = git ? commitProblem(resolved) : optionProblem(resolved);
    if (resolvedWhy) return { field: "resolved", why: resolvedWhy };
  }
  return undefined;
}

/**
 * Writes `lock` to `file` atomically, skills sorted by name: a new temporary file (O_EXCL|O_NOFOLLOW, so nothing
 * planted at a guessable name is written through) renamed over it.
 */
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
  const text = `${JSON.stringify({ version: 1, skills }, null, 2)}\n`;
  await putBeneath(path.dirname(file), path.basename(file), Buffer.from(text));
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
