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
import { expandTilde } from "@crow/core/home";
import { githubRepoProblem, gitUrlProblem, innerPathProblem, optionProblem, refProblem } from "./checks.js";
import { SourceError, SourceUsageError } from "./errors.js";
import { gitCommit, gitExtract } from "./git.js";
import { fetchNpm, fetchWellKnown } from "./http.js";
import { type LockEntry, SOURCE_TYPES } from "./lock.js";

/** The kinds of source, as written to the lockfile's `sourceType` (the `skills` CLI's, but `npm`, which is Crow's). */
export type SourceType = "github" | "git" | "gitlab" | "npm" | "local" | "well-known" | "node_modules";

/** A parsed SOURCE. `source` is how the lockfile records it (and what `update`/`install` fetch again). */
export interface SourceSpec {
  type: SourceType;
  source: string;
  /**
   * git: the clone URL; well-known: the index URL; npm: the package name; local: the absolute path; node_modules: the
   * package's folder.
   */
  location: string;
  /** The branch, tag, commit, npm version or dist-tag asked for (none: the default branch / `latest`). */
  ref?: string;
  /** A folder inside the fetched tree to look in (`owner/repo/path`). */
  subpath?: string;
  /** The skill asked for in the SOURCE itself (`owner/repo@skill`, as the `skills` CLI reads it). */
  skill?: string;
  /** A bare host tried as a `.well-known` index first: the git URL tried when it has none. */
  orGit?: string;
}

/**
 * Parses SOURCE: `npm:<name>[@version]`; an https URL of a `.well-known/agent-skills` index (or ending in
 * `index.json`), or a bare host (`https://example.com`: its `.well-known` index first, else git); a GitHub URL
 * (`https://github.com/owner/repo[/tree/<ref>/<path>]`); a git URL (`https://…`, `file://…`, `ssh://…`,
 * `git@host:…`, with an optional `#ref`); a local bare git repository; a local path (a skill folder, a plugin, a
 * marketplace file or folder); or GitHub's `owner/repo[/path][#ref]`, where `owner/repo@skill` names a skill as the
 * `skills` CLI reads it.
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
  const github =
    /^https?:\/\/github\.com\/([\w.-]+)\/([\w.-]+?)(?:\.git)?(?:\/tree\/([^/#]+)(?:\/([^#]+?))?)?\/?(?:#(.+))?$/i.exec(
      raw,
    );
  if (github) {
    const [, owner, repo, treeRef, sub, hashRef] = github;
    return githubSpec(raw, `${owner}/${repo}`, sub, treeRef ?? hashRef);
  }
  if (/^https?:\/\/[^/#]+\/?$/i.test(raw)) {
    const url = raw.replace(/\/$/, "");
    const index = wellKnownIndex(url);
    const problem = gitUrlProblem(url);
    return { type: "well-known", source: index, location: index, ...(problem ? {} : { orGit: url }) };
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
  const local = path.resolve(cwd, raw.startsWith("~/") ? expandTilde(raw) : raw);
  if (existsSync(local) || /^(\.|\/|~)/.test(raw)) {
    if (!existsSync(local)) throw new SourceUsageError(`${local} does not exist`);
    if (isBareRepository(local)) {
      return { type: "git", source: pathToFileURL(local).href, location: pathToFileURL(local).href };
    }
    return { type: "local", source: local, location: local };
  }
  // owner/repo@skill (no path: the CLI's form), owner/repo[/path][#ref].
  const atSkill = /^([\w.-]+)\/([\w.-]+)@([^/#]+)(?:#([^@]+))?$/.exec(raw);
  if (atSkill) {
    const [, owner, repo, skill, ref] = atSkill;
    return { ...githubSpec(raw, `${owner}/${repo}`, undefined, ref), skill: skill as string };
  }
  // `#ref@skill` is the CLI's way of giving both.
  const shorthand = /^([\w.-]+)\/([\w.-]+)((?:\/[^#@]+)?)(?:#([^@]+)(?:@(.+))?)?$/.exec(raw);
  if (shorthand) {
    const [, owner, repo, sub, ref, skill] = shorthand;
    return { ...githubSpec(raw, `${owner}/${repo}`, sub?.replace(/^\//, ""), ref), ...(skill ? { skill } : {}) };
  }
  if (/^[\w.-]+\/[\w.-]+\/[^@]+@/.test(raw)) {
    throw new SourceUsageError(
      `SOURCE ${raw}: write a ref with # (owner/repo/path#ref); @ names a skill, and only after owner/repo`,
    );
  }
  throw new SourceUsageError(
    `cannot tell what "${raw}" is: give owner/repo[/path][#ref], owner/repo@skill, a git URL, npm:<name>[@version], a .well-known/agent-skills URL or a local path`,
  );
}

function githubSpec(raw: string, repo: string, subpath: string | undefined, ref: string | undefined): SourceSpec {
  const sub = subpath?.replace(/\/+$/, "");
  if (ref) checkRef(raw, ref);
  const problem = githubRepoProblem(repo) ?? (sub ? innerPathProblem(sub) : undefined);
  if (problem) throw new SourceUsageError(`SOURCE ${raw}: ${problem}`);
  return {
    type: "github",
    source: repo,
    location: `https://github.com/${repo}.git`,
    ...(ref ? { ref } : {}),
    ...(sub ? { subpath: sub } : {}),
  };
}

/** Refuses a SOURCE whose `#ref` git would misread (see checks.ts). */
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
  /** Entries of the fetched tree left out (links, special files), relative to `top`: reported with their skill. */
  skipped?: string[];
  /** What the user should know about how it was fetched (a bare host fetched with git after no index). */
  note?: string;
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
  if (spec.type === "local" || spec.type === "node_modules") {
    if (!existsSync(spec.location)) {
      throw new SourceError(
        spec.type === "node_modules"
          ? `${spec.location} does not exist: install the package ${spec.source} (npm install) first`
          : `${spec.location} does not exist`,
      );
    }
    const top = statSync(spec.location).isFile() ? path.dirname(spec.location) : spec.location;
    const root = spec.subpath ? path.join(top, spec.subpath) : spec.location;
    return { spec, top, root, dispose: async () => {} };
  }
  const temp = await mkdtemp(path.join(tmpdir(), "crow-skills-"));
  const dispose = () => rm(temp, { recursive: true, force: true });
  try {
    let resolved: string;
    let skipped: string[] = [];
    if (spec.type === "git" || spec.type === "github" || spec.type === "gitlab") {
      resolved = await gitCommit(spec.location, options.exact ?? spec.ref, options);
      skipped = await gitExtract(spec.location, resolved, temp, options);
    } else if (spec.type === "npm") {
      resolved = await fetchNpm(spec.location, options.exact ?? spec.ref, temp, options.env);
    } else {
      try {
        resolved = await fetchWellKnown(spec.location, temp);
      } catch (error) {
        if (!spec.orGit || !(error instanceof SourceError)) throw error;
        // A bare host with no index: the same URL as a git repository (said, so a typo is not silently a clone).
        await dispose();
        const git: SourceSpec = { type: "git", source: spec.orGit, location: spec.orGit };
        const fetched = await fetchSource(git, options);
        return { ...fetched, note: `${spec.location}: ${error.message}; fetched ${spec.orGit} with git instead` };
      }
    }
    return { spec, top: temp, root: path.join(temp, spec.subpath ?? ""), resolved, skipped, dispose };
  } catch (error) {
    await dispose();
    throw error;
  }
}

/** The `.well-known` index of a URL: itself when it names a JSON file, else its `agent-skills/index.json`. */
export function wellKnownIndex(url: string): string {
  const bare = url.replace(/\/+$/, "");
  if (/\.json$/.test(bare)) return bare;
  if (/\/\.well-known\/[\w-]+$/.test(bare)) return `${bare}/index.json`;
  return `${bare}/.well-known/agent-skills/index.json`;
}

/**
 * The source a lockfile entry records, as {@link parseSource} would make it: the CLI's entries fetch from `sourceUrl`
 * where they have one (`source` is then a label: a host, `owner/repo`); a `node_modules` entry is the package's folder
 * under the lockfile's `node_modules`. The entry's values were checked when the lockfile was read (lock.ts
 * `lockEntryProblem`), and a local source made absolute.
 */
export function specFromLock(entry: LockEntry, lockDir: string): SourceSpec {
  const { sourceType: type, source, sourceUrl, ref } = entry;
  const withRef = ref ? { ref } : {};
  switch (type) {
    case "github":
      return { type, source, location: sourceUrl ?? `https://github.com/${source}.git`, ...withRef };
    case "git":
    case "gitlab":
      return { type, source, location: sourceUrl ?? source, ...withRef };
    case "npm":
      return { type, source, location: source.replace(/^npm:/, ""), ...withRef };
    case "local":
      return { type, source, location: source };
    case "node_modules":
      return { type, source, location: path.join(lockDir, "node_modules", ...source.split("/")) };
    case "well-known":
      return { type, source, location: wellKnownIndex(sourceUrl ?? source) };
    default:
      throw new SourceError(`unknown sourceType "${type}" (expected ${SOURCE_TYPES.join(", ")})`);
  }
}
