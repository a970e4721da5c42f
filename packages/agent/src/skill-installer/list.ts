/**
 * `crow skills list`, `crow skills find` and `crow skills trust|untrust`: the installed skills with where they come
 * from, whether they meet the spec and whether their project is trusted; a search with the model's ranking (core's
 * skill index); and the trust store's two verbs (core's trust.ts).
 */
import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import {
  checkSkillSpec,
  createSkillIndex,
  errorText,
  isProjectTrusted,
  loadSkills,
  trustProject,
  untrustProject,
} from "@crow/core";
import { projectRoot } from "@crow/core/internal";
import { openSource, short } from "./add.js";
import { fetchOptions, oneLine, Refused, type SkillsContext } from "./context.js";
import { digestFolder, readDocument } from "./files.js";
import { type LockEntry, readCliGlobalLock, readLock } from "./lock.js";
import { folderName } from "./names.js";
import { globalScope, projectScope } from "./scope.js";
import { fetchSource, parseSource } from "./sources.js";

/** One skill folder as `crow skills list --json` reports it. */
export interface ListedSkill {
  name: string;
  scope: "project" | "global" | "crow";
  dir: string;
  source: string | null;
  resolved: string | null;
  valid: boolean;
  problems: { file: string; field: string; severity: string; message: string }[];
  trusted: boolean;
  /** The folder no longer has the digest its lockfile records. */
  modified: boolean;
}

interface Root {
  dir: string;
  scope: ListedSkill["scope"];
  lock?: Record<string, LockEntry>;
  trusted: boolean;
}

/** The skill folders Crow reads, lowest priority first, as in core's skillRoots plus `~/.agents/skills`. */
async function roots(context: SkillsContext): Promise<{ roots: Root[]; project: string | undefined }> {
  const global = globalScope(context.env);
  const list: Root[] = [
    { dir: path.join(context.home, "skills"), scope: "crow", trusted: true },
    {
      dir: global.skillsDir,
      scope: "global",
      // The `skills` CLI's global lock (read only) names the sources of what it installed; Crow's own lock wins.
      lock: { ...(await readCliGlobalLock(context.env)), ...byFolder((await readLock(global.lockFile)).skills) },
      trusted: true,
    },
  ];
  const root = await projectRoot(context.cwd);
  const inProject = existsSync(path.join(root, ".git")) || existsSync(path.join(root, ".agents", "skills"));
  if (!inProject) return { roots: list, project: undefined };
  const trusted = await isProjectTrusted(root, { home: context.home, env: context.env });
  const scope = projectScope(root);
  list.push(
    { dir: path.join(root, ".crow", "skills"), scope: "project", trusted },
    { dir: scope.skillsDir, scope: "project", lock: byFolder((await readLock(scope.lockFile)).skills), trusted },
  );
  return { roots: list, project: root };
}

/** Lock entries by the folder their skill installs in (a key is a declared name: names.ts). */
function byFolder(skills: Record<string, LockEntry>): Record<string, LockEntry> {
  const out: Record<string, LockEntry> = {};
  for (const [key, entry] of Object.entries(skills)) {
    const named = folderName(key);
    if ("name" in named) out[named.name] = entry;
  }
  return out;
}

/**
 * A spec problem as a list shows it: what keeps a skill from loading (no frontmatter, no name or description) stays
 * an error; what the loader works around (a name it normalises, a long description it cuts) is a warning.
 */
function listedSeverity(problem: { field: string; message: string; severity: string }, described: boolean): string {
  if (problem.severity !== "error") return problem.severity;
  if (problem.field === "frontmatter" || (problem.field === "description" && !described)) return "error";
  if (problem.field === "name" && /missing|must be a string/.test(problem.message)) return "error";
  return "warning";
}

export async function listSkills(context: SkillsContext): Promise<ListedSkill[]> {
  const listed: ListedSkill[] = [];
  for (const root of (await roots(context)).roots) {
    let names: string[];
    try {
      names = (await readdir(root.dir)).filter((n) => !n.startsWith(".")).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      const dir = path.join(root.dir, name);
      const file = path.join(dir, "SKILL.md");
      if (!existsSync(file)) continue;
      // A FIFO, device or oversized file planted in a skills folder is reported, never waited on.
      let text: string | undefined;
      let unreadable: string | undefined;
      try {
        text = await readDocument(file);
      } catch (error) {
        unreadable = errorText(error);
      }
      if (text === undefined && unreadable === undefined) continue;
      const spec = text === undefined ? { problems: [] } : checkSkillSpec(text, name);
      const described = "description" in spec && Boolean(spec.description);
      const problems = unreadable
        ? [{ severity: "error", field: "SKILL.md", message: unreadable }]
        : spec.problems.map((p) => ({ ...p, severity: listedSeverity(p, described) }));
      const locked = root.lock?.[name];
      const modified = locked?.computedHash
        ? await digestFolder(dir).then(
            (d) => d.digest !== locked?.computedHash,
            () => true,
          )
        : false;
      listed.push({
        name,
        scope: root.scope,
        dir,
        source: locked?.source ?? null,
        resolved: locked?.resolved ?? null,
        valid: !problems.some((p) => p.severity === "error"),
        problems: problems.map((p) => ({ file, ...p })),
        trusted: root.trusted,
        modified,
      });
    }
  }
  return listed;
}

export async function runList(context: SkillsContext, json: boolean): Promise<number> {
  const listed = await listSkills(context);
  if (json) {
    context.out(JSON.stringify(listed, null, 2));
    return 0;
  }
  if (listed.length === 0) {
    context.out("no skills installed; add some with crow skills add SOURCE (see crow skills --help)");
    return 0;
  }
  for (const skill of listed) {
    const from = skill.source ? `${skill.source}${skill.resolved ? `@${short(skill.resolved)}` : ""}` : "not locked";
    const status = [
      skill.valid ? "valid" : "invalid",
      ...(skill.trusted ? [] : ["untrusted project: run crow skills trust"]),
      ...(skill.modified ? ["changed since installed (crow skills install restores it)"] : []),
    ].join(", ");
    context.out(`${skill.name}  ${skill.scope}  ${from}  ${status}`);
    for (const p of skill.problems)
      context.out(`  ${p.file}: ${p.field}: ${p.message}${p.severity === "warning" ? " (warning)" : ""}`);
  }
  return 0;
}

/** `crow skills find QUERY [--source SOURCE]`: core's ranking over the installed skills or a source's. */
export async function runFind(context: SkillsContext, query: string, source: string | undefined): Promise<number> {
  if (source !== undefined) {
    const fetched = await fetchSource(parseSource(source, context.cwd), await fetchOptions(context));
    const { discovery, dispose } = await openSource(context, fetched);
    try {
      const folders = [...new Set(discovery.skills.map((s) => path.dirname(s.dir)))];
      const { skills } = await loadSkills(folders);
      const wanted = new Set(discovery.skills.map((s) => s.dir));
      return printHits(
        context,
        query,
        skills.filter((s) => wanted.has(s.dir)),
        (dir) => path.relative(fetched.top, dir),
      );
    } finally {
      await dispose();
    }
  }
  const { roots: all } = await roots(context);
  const { skills } = await loadSkills(all.map((r) => r.dir));
  const untrusted = new Set(all.filter((r) => !r.trusted).map((r) => r.dir));
  return printHits(context, query, skills, (dir) =>
    untrusted.has(path.dirname(dir)) ? `${dir} (untrusted project)` : dir,
  );
}

async function printHits(
  context: SkillsContext,
  query: string,
  skills: Parameters<typeof createSkillIndex>[0],
  where: (dir: string) => string,
): Promise<number> {
  const index = await createSkillIndex(skills);
  const hits = index.searchKeyword(query, 10);
  if (hits.length === 0) {
    context.out(`no skill matches "${query}" among ${skills.length}`);
    return 1;
  }
  for (const hit of hits) {
    context.out(
      `${hit.skill.name}  ${hit.score.toFixed(2)}  ${oneLine(hit.skill.description)}  ${where(hit.skill.dir)}`,
    );
  }
  return 0;
}

export async function runTrust(context: SkillsContext, dir: string | undefined, trust: boolean): Promise<number> {
  const target = path.resolve(context.cwd, dir ?? ".");
  if (!existsSync(target)) throw new Refused(`${target} does not exist`, 2);
  const options = { home: context.home, env: context.env };
  if (trust) {
    const root = await trustProject(target, options);
    context.out(`trusted ${root}: its .agents/skills and .crow/skills are offered to the model`);
    return 0;
  }
  const root = await projectRoot(target);
  if (await untrustProject(target, options))
    context.out(`untrusted ${root}: its skills are no longer offered to the model`);
  else context.out(`${root} was not trusted`);
  return 0;
}
