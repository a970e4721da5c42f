/**
 * Where skills come from: a SOURCE string of `crow skills add` parsed into a {@link SourceSpec}, and fetched into a
 * temporary folder (git with the machine's git, an npm registry tarball, a local folder, a `.well-known` index).
 * Every fetch checks what it can: the npm tarball's `dist.integrity`, each `.well-known` entry's sha256 digest.
 */
import { createHash } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { SourceError, SourceUsageError } from "./errors.js";
import { gitCommit, gitExtract } from "./git.js";
import { unpackTar } from "./tar.js";

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
    return { type: "npm", source: `npm:${name}`, location: name, ...(at === -1 ? {} : { ref: spec.slice(at + 1) }) };
  }
  if (/^https?:\/\//i.test(raw) && (/\/\.well-known\/agent-skills(\/|$)/.test(raw) || /\/index\.json$/.test(raw))) {
    const url = raw.endsWith(".json") ? raw : `${raw.replace(/\/$/, "")}/index.json`;
    return { type: "well-known", source: url, location: url };
  }
  if (/^(https?|file|ssh|git):\/\//i.test(raw) || /^[\w.-]+@[\w.-]+:/.test(raw)) {
    const hash = raw.indexOf("#");
    const url = hash === -1 ? raw : raw.slice(0, hash);
    const ref = hash === -1 ? undefined : raw.slice(hash + 1);
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
      resolved = await gitCommit(spec.location, options.exact ?? spec.ref, options.home, options.env);
      await gitExtract(spec.location, resolved, options.home, temp, options.env);
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

/** The npm registry: `npm_config_registry` / `NPM_CONFIG_REGISTRY` as npm honours them, else the public one. */
export function npmRegistry(env: NodeJS.ProcessEnv): string {
  const configured = env.npm_config_registry || env.NPM_CONFIG_REGISTRY || "https://registry.npmjs.org/";
  return configured.endsWith("/") ? configured : `${configured}/`;
}

async function getOk(url: string, what: string): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: "follow" });
  } catch (error) {
    throw new SourceError(`cannot fetch ${what} from ${url}: ${(error as Error).message}`);
  }
  if (!response.ok) throw new SourceError(`cannot fetch ${what} from ${url}: HTTP ${response.status}`);
  return response;
}

/** Unpacks `name` at `wanted` (a version or dist-tag; default `latest`) into `dir`; returns the version. */
async function fetchNpm(
  name: string,
  wanted: string | undefined,
  dir: string,
  env: NodeJS.ProcessEnv,
): Promise<string> {
  const registry = npmRegistry(env);
  const url = `${registry}${name.replace("/", "%2f")}`;
  const packument = (await (await getOk(url, `the npm package ${name}`)).json()) as {
    "dist-tags"?: Record<string, string>;
    versions?: Record<string, { dist?: { tarball?: string; integrity?: string } }>;
  };
  const tag = wanted ?? "latest";
  const version = packument.versions?.[tag] ? tag : packument["dist-tags"]?.[tag];
  const dist = version ? packument.versions?.[version]?.dist : undefined;
  if (!version || !dist?.tarball) {
    const known = Object.keys(packument.versions ?? {}).join(", ");
    throw new SourceError(`npm package ${name} has no version or tag "${tag}" (versions: ${known || "none"})`);
  }
  if (!dist.integrity) throw new SourceError(`npm package ${name}@${version} has no dist.integrity to check it by`);
  const tarball = Buffer.from(await (await getOk(dist.tarball, `the tarball of ${name}@${version}`)).arrayBuffer());
  const checked = dist.integrity.split(/\s+/).some((entry) => {
    const [algorithm, expected] = [entry.slice(0, entry.indexOf("-")), entry.slice(entry.indexOf("-") + 1)];
    if (!["sha512", "sha384", "sha256"].includes(algorithm)) return false;
    return createHash(algorithm).update(tarball).digest("base64") === expected;
  });
  if (!checked) {
    throw new SourceError(
      `the tarball of ${name}@${version} does not match the registry's dist.integrity: refused, nothing installed`,
    );
  }
  const unpacked = path.join(dir, ".unpack");
  await unpackTar(tarball, unpacked);
  // npm tarballs hold one top folder (`package/`); the package is what is inside it.
  const { readdir, rename } = await import("node:fs/promises");
  const top = await readdir(unpacked);
  const inner = top.length === 1 && top[0] ? path.join(unpacked, top[0]) : unpacked;
  for (const entry of await readdir(inner)) await rename(path.join(inner, entry), path.join(dir, entry));
  await rm(unpacked, { recursive: true, force: true });
  return version;
}

/** One entry of an Agent Skills Discovery index. */
interface IndexEntry {
  name?: unknown;
  type?: unknown;
  url?: unknown;
  digest?: unknown;
}

/**
 * Downloads every skill of a `.well-known/agent-skills/index.json` into `dir/<name>`, each checked against its
 * sha256 `digest` first: one mismatch refuses the whole source and nothing is kept. Returns the index's digest.
 */
async function fetchWellKnown(indexUrl: string, dir: string): Promise<string> {
  const text = await (await getOk(indexUrl, "the skills index")).text();
  let index: { skills?: unknown };
  try {
    index = JSON.parse(text) as { skills?: unknown };
  } catch {
    throw new SourceError(`${indexUrl} is not JSON: expected an Agent Skills Discovery index ({"skills": [...]})`);
  }
  if (!Array.isArray(index.skills)) throw new SourceError(`${indexUrl} has no "skills" list`);
  for (const entry of index.skills as IndexEntry[]) {
    const { name, type, url, digest } = entry;
    if (typeof name !== "string" || typeof url !== "string" || typeof digest !== "string") {
      throw new SourceError(`${indexUrl}: every skill needs a name, url and digest (got ${JSON.stringify(entry)})`);
    }
    if (!/^[a-z0-9-]{1,64}$/.test(name)) throw new SourceError(`${indexUrl}: "${name}" is not a valid skill name`);
    const href = new URL(url, indexUrl).href;
    const bytes = Buffer.from(await (await getOk(href, `skill ${name}`)).arrayBuffer());
    const actual = createHash("sha256").update(bytes).digest("hex");
    const expected = digest.replace(/^sha256:/i, "").toLowerCase();
    if (actual !== expected) {
      throw new SourceError(
        `skill ${name} from ${href} has sha256 ${actual}, but the index says ${expected}: refused, nothing installed`,
      );
    }
    const target = path.join(dir, name);
    if (type === "archive") {
      await unpackTar(bytes, target);
      const { readdir, rename } = await import("node:fs/promises");
      const top = await readdir(target);
      // An archive holding one folder with the SKILL.md: that folder is the skill.
      if (top.length === 1 && top[0] && !existsSync(path.join(target, "SKILL.md"))) {
        const inner = path.join(target, top[0]);
        for (const e of await readdir(inner)) await rename(path.join(inner, e), path.join(target, e));
        await rm(inner, { recursive: true, force: true });
      }
    } else {
      await mkdir(target, { recursive: true });
      await writeFile(path.join(target, "SKILL.md"), bytes);
    }
  }
  return `sha256:${createHash("sha256").update(text).digest("hex")}`;
}

/** The source a lockfile entry records (`source` and `sourceType`, as {@link parseSource} made them). */
export function specFromLock(type: string, source: string, ref?: string): SourceSpec {
  const location =
    type === "github" ? `https://github.com/${source}.git` : type === "npm" ? source.replace(/^npm:/, "") : source;
  if (!["github", "git", "npm", "local", "well-known"].includes(type)) {
    throw new SourceError(`unknown sourceType "${type}" (expected github, git, npm, local or well-known)`);
  }
  return { type: type as SourceType, source, location, ...(ref ? { ref } : {}) };
}
