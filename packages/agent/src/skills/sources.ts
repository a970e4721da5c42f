/**
 * Where skills come from: a SOURCE string of `crow skills add` parsed into a {@link SourceSpec}, and fetched into a
 * temporary folder (git with the machine's git, an npm registry tarball, a local folder, a `.well-known` index).
 * Every fetch checks what it can: the npm tarball's `dist.integrity`, each `.well-known` entry's sha256 digest.
 */
import { existsSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { githubRepoProblem, gitUrlProblem, innerPathProblem, optionProblem, refProblem } from "./checks.js";
import { SourceError, SourceUsageError } from "./errors.js";
import { gitCommit, gitExtract } from "./git.js";
import { fetchNpm, fetchWellKnown } from "./http.js";

/** The kinds of source, as written to the lockfile's `sourceType`. */
export type SourceType = "github" | "git" | "npm" | "local" | "well-known";

/** A parsed SOURCE. `source` is how the lockfile records it (and what `update`/`install` fetch again). */
export interface SourceSpec {
  type: SourceType;
  source: string;
  /** git: the clone URL; well-known: the index URL; npm: the package name; local: the absolute path. */
  location: string;
  /** The branch, tag, commit, npm version or dist-tag asked for (none: the default branch / `latest`). */
  ref?: string;
  /** A folder inside the fetched tree to look in (`owner/repo/path`). */
  subpath?: string;
}

/**
 * Parses SOURCE: `npm:<name>[@version]`; an https URL of a `.well-known/agent-skills` index (or ending in
 * `index.json`); a git URL (`https://…`, `file://…`, `ssh://…`, `git@host:…`, with an optional `#ref`); a local bare
 * git repository; a local path (a skill folder, a plugin, a marketplace file or folder); or GitHub's
 * `owner/repo[/path][@ref]`.
 */
export function parseSource(text: string, cwd: string): SourceSpec {
  const raw = text.trim();
  if (raw === "") throw new SourceUsageError("the source is empty");
  if (raw.startsWith("npm:")) {
    const spec = raw.slice(4);
    const at = spec.indexOf("@", 1);
    const name = at === -1 ? spec : spec.slice(0, at);
    if (!/^(@[a-z0-9][\w.-]*\/)?[a-z0-9][\w.-]*$/i.test(name)) {
      throw new SourceUsageError(`"${raw}" is not an npm package: write npm:<name> or npm:<name>@<version>`);
    }
    const version = at === -1 ? undefined : spec.slice(at + 1);
    const problem = version === undefined ? undefined : optionProblem(version);
    if (problem) throw new SourceUsageError(`SOURCE ${raw}: the version ${problem}`);
    return { type: "npm", source: `npm:${name}`, location: name, ...(version === undefined ? {} : { ref: version }) };
  }
  if (/^https?:\/\//i.test(raw) && (/\/\.well-known\/agent-skills(\/|$)/.test(raw) || /\/index\.json$/.test(raw))) {
    const url = raw.endsWith(".json") ? raw : `${raw.replace(/\/$/, "")}/index.json`;
    return { type: "well-known", source: url, location: url };
  }
  if (/^(https?|file|ssh|git):\/\//i.test(raw) || /^[\w.-]+@[\w.-]+:/.test(raw)) {
    const hash = raw.indexOf("#");
    const url = hash === -1 ? raw : raw.slice(0, hash);
    const ref = hash === -1 ? undefined : raw.slice(hash + 1);
    if (ref) checkRef(raw, ref);
    const problem = gitUrlProblem(url);
    if (problem) throw new SourceUsageError(`SOURCE ${raw}: ${problem}`);
    return { type: "git", source: url, location: url, ...(ref ? { ref } : {}) };
  }
  const local = path.resolve(cwd, raw.startsWith("~/") ? path.join(process.env.HOME ?? "", raw.slice(2)) : raw);
  if (existsSync(local) || /^(\.|\/|~)/.test(raw)) {
    if (!existsSync(local)) throw new SourceUsageError(`${local} does not exist`);
    if (isBareRepository(local)) {
      return { type: "git", source: pathToFileURL(local).href, location: pathToFileURL(local).href };
    }
    return { type: "local", source: local, location: local };
  }
  const github = /^([\w.-]+)\/([\w.-]+)((?:\/[^@]+)?)(?:@(.+))?$/.exec(raw);
  if (github) {
    const [, owner, repo, sub, ref] = github;
    const subpath = sub?.replace(/^\//, "");
    if (ref) checkRef(raw, ref);
    const problem = githubRepoProblem(`${owner}/${repo}`) ?? (subpath ? innerPathProblem(subpath) : undefined);
    if (problem) throw new SourceUsageError(`SOURCE ${raw}: ${problem}`);
    return {
      type: "github",
      source: `${owner}/${repo}`,
      location: `https://github.com/${owner}/${repo}.git`,
      ...(ref ? { ref } : {}),
      ...(subpath ? { subpath } : {}),
    };
  }
  throw new SourceUsageError(
    `cannot tell what "${raw}" is: give owner/repo[/path][@ref], a git URL, npm:<name>[@version], a .well-known/agent-skills URL or a local path`,
  );
}

/** Refuses a SOURCE whose `#ref` or `@ref` git would misread (see checks.ts). */
function checkRef(raw: string, ref: string): void {
  const problem = refProblem(ref);
  if (problem) throw new SourceUsageError(`the ref of SOURCE ${raw}: ${problem}`);
}

function isBareRepository(dir: string): boolean {
  try {
    return (
      statSync(dir).isDirectory() &&
      existsSync(path.join(dir, "HEAD")) &&
      existsSync(path.join(dir, "objects")) &&
      existsSync(path.join(dir, "refs"))
    );
  } catch {
    return false;
  }
}

/**
 * A source fetched into a folder: `top` is the whole tree (a repository, a package), `root` the part asked for (its
 * `subpath`, or a marketplace file); `resolved` is the commit or version fetched.
 */
export interface FetchedSource {
  spec: SourceSpec;
  top: string;
  root: string;
  resolved?: string;
  /** Removes the temporary folder (local sources have none). */
  dispose(): Promise<void>;
}

export interface FetchOptions {
  /** Crow's home: git sources are cached under `<home>/cache/skills-git`. */
  home: string;
  env: NodeJS.ProcessEnv;
  /** Directories no program is run from (the project: a sandboxed session may have written a `git` there). */
  untrusted: readonly string[];
  /** Fetch exactly this commit or version instead of `spec.ref` (what `crow skills install` does). */
  exact?: string;
}

/** Fetches `spec` into a temporary folder (see {@link FetchedSource}). */
export async function fetchSource(spec: SourceSpec, options: FetchOptions): Promise<FetchedSource> {
  if (spec.type === "local") {
    const top = statSync(spec.location).isFile() ? path.dirname(spec.location) : spec.location;
    const root = spec.subpath ? path.join(top, spec.subpath) : spec.location;
    return { spec, top, root, dispose: async () => {} };
  }
  const temp = await mkdtemp(path.join(tmpdir(), "crow-skills-"));
  const dispose = () => rm(temp, { recursive: true, force: true });
  try {
    let resolved: string;
    if (spec.type === "git" || spec.type === "github") {
      resolved = await gitCommit(spec.location, options.exact ?? spec.ref, options);
      await gitExtract(spec.location, resolved, temp, options);
    } else if (spec.type === "npm") {
      resolved = await fetchNpm(spec.location, options.exact ?? spec.ref, temp, options.env);
    } else {
      resolved = await fetchWellKnown(spec.location, temp);
    }
    return { spec, top: temp, root: path.join(temp, spec.subpath ?? ""), resolved, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/**
 * The source a lockfile entry records (`source` and `sourceType`, as {@link parseSource} made them). The entry's
 * values were checked when the lockfile was read (lock.ts `lockEntryProblem`).
 */
export function specFromLock(type: string, source: string, ref?: string): SourceSpec {
  const location =
    type === "github" ? `https://github.com/${source}.git` : type === "npm" ? source.replace(/^npm:/, "") : source;
  if (!["github", "git", "npm", "local", "well-known"].includes(type)) {
    throw new SourceError(`unknown sourceType "${type}" (expected github, git, npm, local or well-known)`);
  }
  return { type: type as SourceType, source, location, ...(ref ? { ref } : {}) };
}
