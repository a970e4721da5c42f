/**
 * `crow skills`: installs Agent Skills from git, GitHub, npm, local folders, Agent Plugins and marketplaces, and
 * `.well-known/agent-skills` indexes into the standard folders, with a lockfile, spec validation and a yes-gate for
 * skills that run code. See docs/skills.md.
 */
import { errorText } from "@crow/core";
import { parseArgs } from "@crow/mcp/parse-args";
import { runAdd } from "./add.js";
import { Refused, type SkillsIo, skillsContext } from "./context.js";
import { SourceError, SourceUsageError } from "./errors.js";
import { runFind, runList, runTrust } from "./list.js";
import { runInstall, runRemove, runUpdate } from "./maintain.js";
import { resolveScope } from "./scope.js";

export const SKILLS_HELP = `Usage: crow skills <command> [options]

  add SOURCE [--skill NAME…|--all] [--yes]   install skills from SOURCE:
        owner/repo[/path][#ref]              a GitHub repository (cloned with git); also its
                                             https://github.com/owner/repo/tree/<ref>/<path> URL
        owner/repo@skill[#ref]               one skill of it (as the skills CLI reads @)
        https://…, file://…, git@…[#ref]     any git repository (also a local bare repository's path)
        https://host                         its .well-known/agent-skills index, else git
        npm:<name>[@version]                 an npm package (npm_config_registry is honoured)
        ./path                               a skill folder, a plugin (plugin.json) or a marketplace
        https://host/.well-known/agent-skills/index.json   an Agent Skills Discovery index (digests checked)
  update [NAME]        move locked skills to the newest commit or version of their ref; prints what changed
  install              reproduce the lockfile exactly (a digest mismatch is refused, naming the files)
  remove NAME          delete an installed skill and its lock entry
  list [--json]        installed skills: scope, source, valid or not and why, trusted or not
  find QUERY [--source SOURCE]   rank installed skills (or a source's) as the model does
  trust [DIR]          offer this project's skills (.agents/skills, .crow/skills) to the model
  untrust [DIR]        stop offering them

Options:
  --project            install into <project>/.agents/skills, lockfile <project>/skills-lock.json
  --global             install into ~/.agents/skills, lockfile ~/.agents/skills-lock.json
                       (skills-lock.json is the skills CLI's format; either tool restores the other's)
                       (default: --project inside a git repository, else --global)
  --skill NAME         the skill to install from a source with several (repeatable); --all for every one
  --yes                install skills that ship scripts or ask for allowed-tools, or replace a skill not
                       installed from this source, without asking
Installs and updates are recorded with their sha256 in the lockfile and in <crow home>/skills-audit.log.`;

/** Runs `crow skills` with its arguments (after `skills`); resolves to the exit code. */
export async function runSkills(args: string[], io: SkillsIo = {}): Promise<number> {
  const context = skillsContext(io);
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(args);
  } catch (error) {
    context.err(`crow skills: ${errorText(error)}\nRun 'crow skills --help' for usage.`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    (values.help || command === "help" ? context.out : context.err)(SKILLS_HELP);
    return command === undefined && !values.help ? 2 : 0;
  }
  const usage = (message: string) => {
    context.err(`crow skills ${command}: ${message}\nRun 'crow skills --help' for usage.`);
    return 2;
  };
  const arity: Record<string, [number, number]> = {
    add: [1, 1],
    update: [0, 1],
    install: [0, 0],
    remove: [1, 1],
    list: [0, 0],
    find: [1, 1],
    trust: [0, 1],
    untrust: [0, 1],
  };
  const bounds = arity[command];
  if (!bounds) return usage(`unknown command (expected ${Object.keys(arity).join(", ")})`);
  if (rest.length < bounds[0] || rest.length > bounds[1]) return usage(`takes ${bounds.join(" to ")} arguments`);
  if (values.project && values.global) return usage("--project and --global exclude each other");
  const yes = values.yes === true;
  try {
    const scope = () => resolveScope({ project: values.project, global: values.global }, context.cwd, context.env);
    switch (command) {
      case "add":
        return await runAdd(context, {
          source: rest[0] as string,
          scope: await scope(),
          skills: values.skill ?? [],
          all: values.all === true,
          yes,
        });
      case "update":
        return await runUpdate(context, await scope(), rest[0], yes);
      case "install":
        return await runInstall(context, await scope(), yes);
      case "remove":
        return await runRemove(context, await scope(), rest[0] as string);
      case "list":
        return await runList(context, values.json === true);
      case "find":
        return await runFind(context, rest[0] as string, values.source);
      default:
        return await runTrust(context, rest[0], command === "trust");
    }
  } catch (error) {
    if (error instanceof Refused) {
      context.err(`crow skills ${command}: ${error.message}`);
      return error.code;
    }
    if (error instanceof SourceError) {
      context.err(`crow skills ${command}: ${error.message}`);
      return error instanceof SourceUsageError ? 2 : 1;
    }
    throw error;
  }
}

function parse(args: string[]) {
  return parseArgs({
    args,
    options: {
      help: { type: "boolean", short: "h" },
      project: { type: "boolean" },
      global: { type: "boolean" },
      skill: { type: "string", multiple: true },
      all: { type: "boolean" },
      yes: { type: "boolean", short: "y" },
      json: { type: "boolean" },
      source: { type: "string" },
    },
    strict: true,
    allowPositionals: true,
  });
}
