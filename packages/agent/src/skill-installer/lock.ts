/**
 * `skills-lock.json`, shared with the `skills` CLI (vercel-labs/skills 1.7.4): `{"version": 1, "skills": {"<name>":
 * {source, sourceUrl?, ref?, sourceType, skillPath?, computedHash}}}`, skills sorted by name, local sources relative to
 * the lockfile. Crow adds its own fields, which the CLI keeps and ignores: `resolved` (the commit or version fetched)
 * and `files` (each file's sha256, so a mismatch can name the files). Fields neither tool knows are kept as they are.
 * The key is the skill's declared name as the CLI writes it (`Reviewing Pull Requests`); the folder it is installed
 * in is that name normalised (names.ts). Also the append-only audit log of installs, updates and removals.
 * See docs/skills.md and its compatibility table ("Crow and the `skills` CLI").
 */
import { appendFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { errorText } from "@crow/core";
import { putBeneath, readInside } from "@crow/core/internal";
import { homeDir } from "../config/home.js";
import {
  commitProblem,
  githubRepoProblem,
  gitUrlProblem,
  innerPathProblem,
  optionProblem,
  refProblem,
} from "./checks.js";
import { SourceError } from "./errors.js";
import { MAX_DOCUMENT_BYTES, mib } from "./limits.js";
import { folderName } from "./names.js";

/** One locked skill: the CLI's fields, Crow's (`resolved`, `files`), and any other field kept as read. */
export interface LockEntry {
  source: string;
  /** The URL fetched when `source` is not one (git: the clone URL; well-known: the URL the user gave). */
  sourceUrl?: string;
  ref?: string;
  sourceType: string;
  /** The skill's SKILL.md inside the source (`skills/pdf/SKILL.md`; `SKILL.md` for a source that is the skill). */
  skillPath?: string;
  /** sha256 (hex) of the folder (files.ts `digestFolder`), computed as the `skills` CLI computes it. */
  computedHash: string;
  resolved?: string;
  files?: Record<string, string>;
  [field: string]: unknown;
}

export interface Lockfile {
  version: 1;
  skills: Record<string, LockEntry>;
  [field: string]: unknown;
}

/** The source types of the two tools: the CLI's six (`gitlab` read as git) and Crow's `npm`. */
export const SOURCE_TYPES = ["github", "git", "gitlab", "local", "well-known", "node_modules", "npm"];

/** The skill's folder inside its source, from `skillPath` (or Crow's former `path`); undefined when not recorded. */
export function skillFolder(entry: LockEntry): string | undefined {
  if (typeof entry.skillPath !== "string") return undefined;
  return entry.skillPath.replace(/(^|\/)SKILL\.md$/i, "").replace(/\/$/, "");
}

/**
 * Reads the lockfile at `file`; a missing or empty one is empty (the sandbox holds an empty placeholder while a
 * sandboxed shell runs), a broken one an error saying so (never overwritten). Every entry is checked (see
 * {@link lockEntryProblem}) before anything uses it: a lockfile is committed to repositories people clone, so its
 * names and values are an attacker's as much as the user's. Local sources are resolved against the lockfile's folder.
 * Read as a regular file only (a FIFO planted at the name cannot hold the command up), at most
 * {@link MAX_DOCUMENT_BYTES}.
 */
export async function readLock(file: string): Promise<Lockfile> {
  const read = await readInside(path.dirname(file), file, MAX_DOCUMENT_BYTES + 1);
  if (!read) return { version: 1, skills: {} };
  if ("refused" in read) throw new SourceError(`${file} was not read: ${read.refused}; fix or delete it`);
  if (read.bytes.length > MAX_DOCUMENT_BYTES) {
    throw new SourceError(`${file} is larger than ${mib(MAX_DOCUMENT_BYTES)} MiB; fix or delete it`);
  }
  const text = read.bytes.toString("utf8");
  if (text.trim() === "") return { version: 1, skills: {} };
  let parsed: { version?: unknown; skills?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (error) {
    throw new SourceError(`${file} is not valid JSON (${errorText(error)}); fix or delete it`);
  }
  if (parsed.version !== 1 || typeof parsed.skills !== "object" || parsed.skills === null) {
    throw new SourceError(
      `${file} is not a version 1 skills-lock.json ({"version": 1, "skills": {…}}); fix or delete it`,
    );
  }
  const lock = parsed as Lockfile;
  for (const [name, raw] of Object.entries(lock.skills)) {
    const problem = lockEntryProblem(name, raw as unknown);
    if (problem) {
      throw new SourceError(
        `${path.basename(file)}: entry '${name}' field ${problem.field}: ${problem.why}; fix or remove the entry (${file})`,
      );
    }
    const entry = raw as LockEntry;
    // Crow before the shared format wrote the folder as `path`; it is the CLI's `skillPath` now.
    if (typeof entry.path === "string" && entry.skillPath === undefined) {
      entry.skillPath = entry.path === "" ? "SKILL.md" : `${entry.path}/SKILL.md`;
    }
    delete entry.path;
    if (entry.sourceType === "local" && !path.isAbsolute(entry.source)) {
      entry.source = path.resolve(path.dirname(file), entry.source);
    }
  }
  return lock;
}

const NPM_NAME = /^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i;

/** Which field of the lock entry `name` is refused and why, or undefined when the entry is sound. */
export function lockEntryProblem(name: string, entry: unknown): { field: string; why: string } | undefined {
  const folder = folderName(name);
  if ("refused" in folder) return { field: "name", why: folder.refused };
  if (typeof entry !== "object" || entry === null) return { field: "name", why: "the entry is not an object" };
  const e = entry as Record<string, unknown>;
  for (const field of ["source", "sourceType", "computedHash"]) {
    if (typeof e[field] !== "string") return { field, why: "missing or not a string" };
  }
  for (const field of ["ref", "resolved", "sourceUrl", "skillPath", "path"]) {
    if (e[field] !== undefined && typeof e[field] !== "string") return { field, why: "not a string" };
  }
  if (e.files !== undefined && (typeof e.files !== "object" || e.files === null)) {
    return { field: "files", why: "not an object" };
  }
  const { source, sourceType, computedHash, ref, resolved, sourceUrl } = e as LockEntry;
  if (!SOURCE_TYPES.includes(sourceType)) {
    return { field: "sourceType", why: `"${sourceType}" is not one of ${SOURCE_TYPES.join(", ")}` };
  }
  if (!/^[0-9a-f]{64}$/.test(computedHash))
    return { field: "computedHash", why: "is not a sha256 (64 hex characters)" };
  for (const field of ["path", "skillPath"]) {
    const value = e[field];
    if (typeof value === "string") {
      const innerWhy = innerPathProblem(value);
      if (innerWhy) return { field, why: innerWhy };
    }
  }
  const git = sourceType === "git" || sourceType === "github" || sourceType === "gitlab";
  const sourceWhy = sourceProblem(sourceType, source, sourceUrl);
  if (sourceWhy) return sourceWhy;
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

function sourceProblem(
  sourceType: string,
  source: string,
  sourceUrl: string | undefined,
): { field: string; why: string } | undefined {
  const bad = (field: string, why: string | undefined) => (why ? { field, why } : undefined);
  const http = (value: string) =>
    /^https?:\/\/\S+$/i.test(value) ? undefined : `${JSON.stringify(value)} is not an http(s) URL`;
  switch (sourceType) {
    case "github":
      return (
        bad("source", githubRepoProblem(source)) ?? (sourceUrl ? bad("sourceUrl", gitUrlProblem(sourceUrl)) : undefined)
      );
    case "git":
    case "gitlab":
      // The CLI writes the clone URL as `sourceUrl`; `source` is that URL or a label (`owner/repo`).
      return sourceUrl ? bad("sourceUrl", gitUrlProblem(sourceUrl)) : bad("source", gitUrlProblem(source));
    case "local":
      return bad("source", optionProblem(source));
    case "npm":
      return bad(
        "source",
        /^npm:/.test(source) && NPM_NAME.test(source.slice(4))
          ? undefined
          : `${JSON.stringify(source)} is not npm:<package name>`,
      );
    case "node_modules":
      return bad("source", NPM_NAME.test(source) ? undefined : `${JSON.stringify(source)} is not an npm package name`);
    default:
      // well-known: the CLI's `source` is the host and `sourceUrl` the URL given; Crow's own entries hold the URL.
      return sourceUrl ? bad("sourceUrl", http(sourceUrl)) : bad("source", http(source));
  }
}

/** `source` relative to the lockfile's folder as the CLI writes it (`./vendor/x`, `../x`, `.`), else absolute. */
function portableSource(source: string, lockDir: string): string {
  const relative = path.relative(lockDir, source);
  if (path.isAbsolute(relative)) return source.split(path.sep).join("/");
  const portable = relative.split(path.sep).join("/");
  if (portable === "") return ".";
  return portable === ".." || portable.startsWith("../") ? portable : `./${portable}`;
}

/** The CLI's fields first, in its order; then every field neither tool knows, as read; then Crow's. */
const LEADING = ["source", "sourceUrl", "ref", "sourceType", "skillPath", "computedHash"];
const TRAILING = ["resolved", "files"];

/**
 * Writes `lock` to `file` atomically, skills sorted by name, two-space JSON and a final newline as the CLI writes it: a
 * new temporary file (O_EXCL|O_NOFOLLOW, so nothing planted at a guessable name is written through) renamed over it.
 */
export async function writeLock(file: string, lock: Lockfile): Promise<void> {
  const skills: Record<string, Record<string, unknown>> = {};
  const lockDir = path.dirname(file);
  for (const name of Object.keys(lock.skills).sort()) {
    const entry = lock.skills[name] as LockEntry;
    const out: Record<string, unknown> = {};
    const put = (field: string) => {
      if (entry[field] === undefined || entry[field] === "") return;
      out[field] =
        field === "source" && entry.sourceType === "local" ? portableSource(entry.source, lockDir) : entry[field];
    };
    for (const field of LEADING) put(field);
    for (const field of Object.keys(entry))
      if (!LEADING.includes(field) && !TRAILING.includes(field) && field !== "path") put(field);
    for (const field of TRAILING) put(field);
    skills[name] = out;
  }
  const { version: _version, skills: _skills, ...rest } = lock;
  await mkdir(lockDir, { recursive: true });
  const text = `${JSON.stringify({ version: 1, skills, ...rest }, null, 2)}\n`;
  await putBeneath(lockDir, path.basename(file), Buffer.from(text));
}

/**
 * The `skills` CLI's global lock (`$XDG_STATE_HOME/skills/.skill-lock.json`, else `~/.agents/.skill-lock.json`,
 * version 3), read only, by the folder each skill installs in: `crow skills list` names the sources of global skills
 * the CLI installed. Crow never writes it: the CLI rewrites the whole file (its dismissed prompts, last agents) without
 * a lock of its own, and its `skillFolderHash` is GitHub's tree id, which a git fetch of one commit does not give.
 * Anything unreadable is no lock, as the CLI reads it.
 */
export async function readCliGlobalLock(env: NodeJS.ProcessEnv): Promise<Record<string, LockEntry>> {
  const file = env.XDG_STATE_HOME
    ? path.join(env.XDG_STATE_HOME, "skills", ".skill-lock.json")
    : path.join(homeDir(env), ".agents", ".skill-lock.json");
  const out: Record<string, LockEntry> = {};
  try {
    const read = await readInside(path.dirname(file), file, MAX_DOCUMENT_BYTES + 1);
    if (!read || "refused" in read || read.bytes.length > MAX_DOCUMENT_BYTES) return out;
    const parsed = JSON.parse(read.bytes.toString("utf8")) as { version?: unknown; skills?: unknown };
    if (typeof parsed.version !== "number" || parsed.version < 3) return out;
    if (typeof parsed.skills !== "object" || parsed.skills === null) return out;
    for (const [key, value] of Object.entries(parsed.skills as Record<string, unknown>)) {
      const named = folderName(key);
      const entry = value as Record<string, unknown>;
      if (!("name" in named) || typeof entry?.source !== "string" || typeof entry.sourceType !== "string") continue;
      out[named.name] = { source: entry.source, sourceType: entry.sourceType, computedHash: "" };
    }
  } catch {
    return out;
  }
  return out;
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
