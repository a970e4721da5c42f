/**
 * The model-facing side of skills (progressive disclosure): a one-line hint for the system prompt and the two tools
 * `discover_skills` and `get_skill_details`, as plain definitions with JSON-schema parameters and handlers that
 * return tool results — the extension wiring only has to register them.
 */
import { errorText } from "../error-text.js";
import type { ToolDefinition } from "../messages.js";
import type { ToolResult } from "../tools.js";
import { loadedSkill } from "./external.js";
import type { SkillIndex } from "./search.js";
import type { Skill, SkillSearchResult } from "./types.js";

/** A tool the skills engine offers: its definition and its handler. */
export interface SkillTool {
  definition: ToolDefinition;
  execute(args: Record<string, unknown>, signal?: AbortSignal): Promise<ToolResult>;
}

const MAX_LIMIT = 20;

/**
 * The one line for the system prompt, or "" when there are no skills (no hint, no tools needed). Names a few
 * skills so the model knows what kind of help exists without paying for every description.
 */
export function skillsHint(skills: readonly Skill[]): string {
  if (skills.length === 0) return "";
  const examples = skills.slice(0, 5).map((s) => s.name);
  const more = skills.length > examples.length ? ", …" : "";
  const count = skills.length === 1 ? "1 skill is" : `${skills.length} skills are`;
  return (
    `${count} installed (${examples.join(", ")}${more}): before a specialised task, call discover_skills with a ` +
    "short description of it, then get_skill_details for a relevant skill and follow its instructions."
  );
}

/** `get_skill_details`' answer: the whole SKILL.md, then the folder and its scripts, references, assets and others. */
export function skillDetails(skill: Skill): string {
  const groups = new Map<string, string[]>();
  for (const file of skill.files) {
    const top = file.split("/")[0] ?? "";
    const group = file.includes("/") && ["scripts", "references", "assets"].includes(top) ? top : "other files";
    groups.set(group, [...(groups.get(group) ?? []), file]);
  }
  const where = skill.load ? `Served by ${skill.root} at ${skill.dir}` : `Skill folder: ${skill.dir}`;
  const lines = [skill.content.trimEnd(), "", "---", where];
  if (skill.files.length === 0) lines.push("No other files.");
  for (const group of ["scripts", "references", "assets", "other files"]) {
    const files = groups.get(group);
    if (files) lines.push(`${group[0]?.toUpperCase()}${group.slice(1)}:`, ...files.map((f) => `- ${f}`));
  }
  return lines.join("\n");
}

/** `discover_skills`' answer: one numbered entry per hit with name, score, description and SKILL.md path. */
export function formatSkillHits(result: SkillSearchResult, query: string): string {
  if (result.hits.length === 0) return `No skill matches "${query}". Try other words for the task.`;
  const lines = result.hits.map(
    (hit, i) =>
      `${i + 1}. ${hit.skill.name} (score ${hit.score.toFixed(3)})\n   ${hit.skill.description}\n   path: ${hit.skill.file}`,
  );
  for (const p of result.problems) lines.push(`(note: ${p.message})`);
  lines.push("Call get_skill_details with a name to read its instructions.");
  return lines.join("\n");
}

/** The two skill tools over `index`. Argument errors are `isError` results that say what was expected. */
export function skillTools(index: SkillIndex): SkillTool[] {
  return [
    {
      definition: {
        type: "function",
        function: {
          name: "discover_skills",
          description:
            "Search the installed skills (packaged instructions, scripts and references for specialised tasks) " +
            "and list the best matches with their descriptions. Describe the task in a few words.",
          parameters: {
            type: "object",
            properties: {
              query: { type: "string", description: "What you need to do, e.g. 'fill in a PDF form'." },
              limit: { type: "integer", minimum: 1, maximum: MAX_LIMIT, default: 5, description: "Results wanted." },
            },
            required: ["query"],
            additionalProperties: false,
          },
        },
      },
      async execute(args, signal) {
        const query = args.query;
        if (typeof query !== "string" || query.trim() === "") return error("query must be a non-empty string");
        const limit = args.limit ?? 5;
        if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
          return error(`limit must be an integer from 1 to ${MAX_LIMIT}`);
        }
        if (index.skills.length === 0) return { content: "No skills are installed." };
        const result = await index.search(query, limit, signal);
        return { content: formatSkillHits(result, query) };
      },
    },
    {
      definition: {
        type: "function",
        function: {
          name: "get_skill_details",
          description:
            "Read a skill's full instructions (its SKILL.md) and the list of its scripts, references and assets. " +
            "Use a name returned by discover_skills.",
          parameters: {
            type: "object",
            properties: { name: { type: "string", description: "The skill's name, e.g. 'pdf-processing'." } },
            required: ["name"],
            additionalProperties: false,
          },
        },
      },
      async execute(args, signal) {
        const name = args.name;
        if (typeof name !== "string" || name.trim() === "") return error("name must be a non-empty string");
        const skill = index.get(name.trim());
        if (skill) {
          try {
            return { content: skillDetails(await loadedSkill(skill, signal)) };
          } catch (failure) {
            const why = errorText(failure);
            return error(`Could not read skill "${skill.name}" from ${skill.root}: ${why}. Use another skill.`);
          }
        }
        const close = index.closeNames(name);
        const hint = close.length > 0 ? ` Close names: ${close.join(", ")}.` : "";
        return error(`No skill is named "${name}".${hint} Use discover_skills to search by task.`);
      },
    },
  ];
}

function error(message: string): ToolResult {
  return { content: message, isError: true };
}
