/**
 * The skills inside a fetched source: a folder that is itself a skill, an Agent Plugins plugin (`plugin.json` +
 * `skills/<name>/SKILL.md`), a marketplace listing plugins (Claude Code's `.claude-plugin/marketplace.json` shape:
 * `plugins[].source` a relative path, `{source: "github", repo}` or `{source: "url"|"git", url}`, each plugin's
 * `skills` list naming its skill folders), or any tree holding `<name>/SKILL.md` folders. Each skill is named by
 * names.ts's one rule, checked against the Agent Skills spec (what breaks it but is safe is a notice, not a refusal)
 * and inspected for what it may run (scripts, `allowed-tools`).
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { checkSkillSpec, type SpecProblem } from "@crow/core";
import { githubRepoProblem, gitUrlProblem, innerPathProblem, refProblem } from "./checks.js";
import { SourceError } from "./errors.js";
import { readDocument, skillFiles } from "./files.js";
import { declaredName, folderName } from "./names.js";
import { type FetchedSource, type FetchOptions, fetchSource, parseSource } from "./sources.js";

/** One skill found in a source. */
export interface FoundSkill {
  /** The folder it installs as: its declared name, normalised (names.ts); its source folder's name when refused. */
  name: string;
  /** Its frontmatter `name` as declared (the lockfile key, as the `skills` CLI writes it). */
  declared: string;
  /** Why it cannot be installed (no frontmatter, no description, an unsafe name, a duplicate), if so. */
  refused?: string;
  /** What the user should know about it that does not stop the install (a normalised name, spec departures). */
  notices: string[];
  /** How messages name its SKILL.md: the source and the path inside it, never a temporary folder. */
  shown: string;
  description: string;
  /** Its folder, absolute. */
  dir: string;
  /** Its folder relative to the fetched tree's top (POSIX; "" for a source that is one skill). */
  path: string;
  /** The fetched source it lives in (a marketplace's plugin may live in another repository). */
  from: FetchedSource;
  /** Every spec problem, with the SKILL.md path. */
  problems: (SpecProblem & { file: string })[];
  /** What may run: executable files, a scripts/ folder, `allowed-tools`. Empty for a skill of instructions only. */
  runs: string[];
  /** Links inside the folder, left out of the install. */
  links: string[];
  /** The plugin it comes from, if any. */
  plugin?: string;
}

/** The skills of a source, and what the user should know that is not installed (plugins' MCP configurations). */
export interface Discovery {
  skills: FoundSkill[];
  notes: string[];
  /** Further fetched sources (a marketplace's remote plugins), to dispose with the source. */
  extra: FetchedSource[];
}

const MARKETPLACES = ["marketplace.json", ".claude-plugin/marketplace.json", ".plugin/marketplace.json"];
const PLUGINS = ["plugin.json", ".claude-plugin/plugin.json", ".plugin/plugin.json"];
const SKIP = new Set([".git", "node_modules"]);

/** Finds the skills of `source` (see the module comment). Throws {@link SourceError} when there are none. */
export async function discoverSkills(source: FetchedSource, options: FetchOptions): Promise<Discovery> {
  const discovery: Discovery = { skills: [], notes: [], extra: [] };
  const root = source.root;
  if (!existsSync(root)) throw new SourceError(`${source.spec.subpath ?? root} is not in ${source.spec.source}`);
  const marketplaceFile = root.endsWith(".json") ? root : MARKETPLACES.map((m) => path.join(root, m)).find(existsSync);
  if (marketplaceFile) await fromMarketplace(marketplaceFile, source, options, discovery);
  else if (PLUGINS.some((p) => existsSync(path.join(root, p)))) await fromPlugin(root, source, discovery);
  else await walk(root, source, discovery, 0);
  // The same folder reached twice (a plugin's list and a walk) is one skill; two folders with one name: the first wins.
  const byDir = new Set<string>();
  const byName = new Map<string, FoundSkill>();
  discovery.skills = discovery.skills.filter((skill) => {
    if (byDir.has(skill.dir)) return false;
    byDir.add(skill.dir);
    const earlier = skill.refused ? undefined : byName.get(skill.name);
    if (earlier) skill.refused = `${earlier.shown} is also named ${skill.name}; only that one is installed`;
    else if (!skill.refused) byName.set(skill.name, skill);
    return true;
  });
  // A marketplace offers what its plugins list; a skill folder in its tree that no plugin lists is said, not offered.
  if (marketplaceFile && marketplaceFile !== root) {
    for (const skill of await walkSkills(source)) {
      if (!byDir.has(skill.dir)) {
        discovery.notes.push(
          `${skill.shown} is in no plugin of the marketplace: not offered (give its folder as the SOURCE to install it)`,
        );
      }
    }
  }
  if (discovery.skills.length === 0) {
    throw new SourceError(
      `no skills in ${source.spec.source}: expected <name>/SKILL.md folders, a plugin or a marketplace`,
    );
  }
  discovery.skills.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return discovery;
}

/** Every skill folder under the source's root (a plain walk: no marketplace, no plugin lists). */
export async function walkSkills(source: FetchedSource): Promise<FoundSkill[]> {
  const discovery: Discovery = { skills: [], notes: [], extra: [] };
  await walk(source.root, source, discovery, 0);
  return discovery.skills;
}

async function walk(dir: string, source: FetchedSource, discovery: Discovery, depth: number, plugin?: string) {
  if (existsSync(path.join(dir, "SKILL.md"))) {
    discovery.skills.push(await inspect(dir, source, plugin));
    return;
  }
  if (depth >= 5) return;
  const entries = await readdir(dir, { withFileTypes: true });
  for (const entry of entries) {
    if (entry.isDirectory() && !SKIP.has(entry.name)) {
      await walk(path.join(dir, entry.name), source, discovery, depth + 1, plugin);
    }
  }
}

/**
 * The skills of the plugin in `dir`: those its manifest's (or its marketplace entry's) `skills` list names (each a
 * skill folder or a folder of them, relative to the plugin), else those under `skills/`. Labelled by `label` (the
 * marketplace's name for it), else the manifest's `name`, else the folder's.
 */
async function fromPlugin(
  dir: string,
  source: FetchedSource,
  discovery: Discovery,
  label?: string,
  listed?: unknown,
): Promise<void> {
  const manifest = PLUGINS.map((p) => path.join(dir, p)).find(existsSync);
  let name = label ?? (dir === source.top ? source.spec.source : path.basename(dir));
  let list = listed;
  if (manifest) {
    const text = (await readDocument(manifest)) ?? "";
    try {
      const parsed = JSON.parse(text) as { name?: unknown; skills?: unknown };
      if (typeof parsed.name === "string" && label === undefined) name = parsed.name;
      list ??= parsed.skills;
    } catch {
      throw new SourceError(`${shownPath(source, manifest)} is not valid JSON`);
    }
  }
  for (const mcp of ["mcp.json", ".mcp.json"]) {
    if (existsSync(path.join(dir, mcp))) {
      discovery.notes.push(
        `plugin ${name} ships MCP servers (${mcp}): not installed; read it and add the servers to config.yaml if you trust them`,
      );
    }
  }
  const paths = typeof list === "string" ? [list] : Array.isArray(list) ? list : [];
  if (paths.length === 0) {
    const skillsDir = path.join(dir, "skills");
    if (existsSync(skillsDir)) await walk(skillsDir, source, discovery, 1, name);
    return;
  }
  for (const entry of paths) {
    const rel = typeof entry === "string" ? entry.replace(/^\.\/+/, "").replace(/\/+$/, "") : undefined;
    const why = rel === undefined ? "is not a string" : innerPathProblem(rel);
    if (why !== undefined || rel === undefined) {
      discovery.notes.push(`plugin ${name}: skills entry ${JSON.stringify(entry)} ${why ?? ""}; skipped`);
      continue;
    }
    const target = path.join(dir, rel);
    if (!existsSync(target)) {
      discovery.notes.push(`plugin ${name}: ${shownPath(source, target)} (in its skills list) does not exist; skipped`);
      continue;
    }
    await walk(target, source, discovery, 1, name);
  }
}

interface MarketplacePlugin {
  name?: unknown;
  source?: unknown;
  skills?: unknown;
}

async function fromMarketplace(file: string, source: FetchedSource, options: FetchOptions, discovery: Discovery) {
  const shown = shownPath(source, file);
  let market: { plugins?: unknown; metadata?: { pluginRoot?: unknown } };
  const text = (await readDocument(file)) ?? "";
  try {
    market = JSON.parse(text) as typeof market;
  } catch {
    throw new SourceError(`${shown} is not valid JSON`);
  }
  if (!Array.isArray(market.plugins)) throw new SourceError(`${shown} has no "plugins" list`);
  // Relative plugin sources are relative to the marketplace's root: the folder holding `.claude-plugin/`.
  const fileDir = path.dirname(file);
  const base = /^\.(claude-)?plugin$/.test(path.basename(fileDir)) ? path.dirname(fileDir) : fileDir;
  const pluginRoot = typeof market.metadata?.pluginRoot === "string" ? market.metadata.pluginRoot : ".";
  for (const entry of market.plugins as MarketplacePlugin[]) {
    const name = typeof entry.name === "string" ? entry.name : "(unnamed)";
    const where = entry.source;
    if (typeof where === "string" && !/^[a-z]+:/i.test(where)) {
      const dir = path.resolve(base, pluginRoot, where);
      if (path.relative(base, dir).startsWith("..")) {
        throw new SourceError(`${shown}: plugin ${name}'s source ${where} points outside the marketplace`);
      }
      if (!existsSync(dir)) throw new SourceError(`${shown}: plugin ${name}'s folder ${where} does not exist`);
      await fromPlugin(dir, source, discovery, name, entry.skills);
      continue;
    }
    const remote = remoteSource(where, (field, why) => {
      throw new SourceError(`${path.basename(file)}: plugin '${name}' field ${field}: ${why} (${shown})`);
    });
    if (!remote) {
      discovery.notes.push(`plugin ${name}: source ${JSON.stringify(where)} is not a kind Crow installs from; skipped`);
      continue;
    }
    const fetched = await fetchSource(parseSource(remote, base), options);
    discovery.extra.push(fetched);
    await fromPlugin(fetched.root, fetched, discovery, name, entry.skills);
  }
}

/**
 * A marketplace entry's remote source as a SOURCE string, or undefined. Its values come from whoever published the
 * marketplace: each is checked (checks.ts) and a bad one handed to `refuse` with its field.
 */
function remoteSource(where: unknown, refuse: (field: string, why: string) => never): string | undefined {
  if (typeof where === "string") return where;
  if (typeof where !== "object" || where === null) return undefined;
  const s = where as { source?: unknown; repo?: unknown; url?: unknown; ref?: unknown; path?: unknown };
  const ref = typeof s.ref === "string" ? s.ref : undefined;
  const refWhy = ref === undefined ? undefined : refProblem(ref);
  if (refWhy) refuse("ref", refWhy);
  if (s.source === "github" && typeof s.repo === "string") {
    const repoWhy = githubRepoProblem(s.repo);
    if (repoWhy) refuse("repo", repoWhy);
    const sub = typeof s.path === "string" ? s.path.replace(/^\/+|\/+$/g, "") : "";
    const subWhy = innerPathProblem(sub);
    if (subWhy) refuse("path", subWhy);
    return `${s.repo}${sub ? `/${sub}` : ""}${ref ? `@${ref}` : ""}`;
  }
  if ((s.source === "url" || s.source === "git") && typeof s.url === "string") {
    const urlWhy = gitUrlProblem(s.url);
    if (urlWhy) refuse("url", urlWhy);
    return `${s.url}${ref ? `#${ref}` : ""}`;
  }
  return undefined;
}

/** How messages name `abs` inside `from`: a local path as it is, else the source and the path inside it. */
export function shownPath(from: FetchedSource, abs: string): string {
  if (from.spec.type === "local") return abs;
  const rel = path.relative(from.top, abs).split(path.sep).join("/");
  return `${from.spec.source}${from.resolved ? `@${from.resolved.slice(0, 12)}` : ""}:${rel || "."}`;
}

/**
 * Reads one skill folder: its installed name (names.ts's rule), what stops it from being installed (no frontmatter,
 * no name or description, an unsafe name), the spec departures that do not (notices), and what in it may run.
 */
export async function inspect(dir: string, from: FetchedSource, plugin?: string): Promise<FoundSkill> {
  const file = path.join(dir, "SKILL.md");
  const shown = shownPath(from, file);
  const text = await readDocument(file);
  if (text === undefined) throw new SourceError(`${shown} disappeared while it was read`);
  const folder = path.basename(dir);
  const spec = checkSkillSpec(text, folder);
  const declared = spec.name === undefined ? folder : declaredName(spec.name);
  const named = folderName(declared);
  const name = "name" in named ? named.name : folder;
  const blocking = spec.problems.find(
    (p) =>
      p.severity === "error" &&
      (p.field === "frontmatter" ||
        (p.field === "name" && spec.name === undefined) ||
        (p.field === "description" && !spec.description)),
  );
  const refused = blocking
    ? `${blocking.field}: ${blocking.message}`
    : "refused" in named
      ? `name: ${named.refused}`
      : undefined;
  const notices: string[] = [];
  if ("name" in named && named.rule)
    notices.push(`installed as ${name}: its name "${declared}" breaks a rule: ${named.rule}`);
  for (const problem of spec.problems) {
    if (problem === blocking || problem.field === "name") continue;
    notices.push(`${problem.field}: ${problem.message}`);
  }
  const { files, links } = await skillFiles(dir);
  const runs: string[] = [];
  if (files.some((f) => f.rel.startsWith("scripts/"))) runs.push("ships a scripts/ folder");
  const executables = files.filter((f) => f.executable).map((f) => f.rel);
  if (executables.length > 0) runs.push(`executable files: ${executables.join(", ")}`);
  if (spec.allowedTools) runs.push(`asks for allowed-tools: ${spec.allowedTools}`);
  return {
    name,
    declared,
    ...(refused ? { refused } : {}),
    notices,
    shown,
    description: spec.description ?? "",
    dir,
    path: path.relative(from.top, dir).split(path.sep).join("/"),
    from,
    problems: spec.problems.map((p) => ({ ...p, file })),
    runs,
    links,
    ...(plugin ? { plugin } : {}),
  };
}
