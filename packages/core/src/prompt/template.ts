/**
 * The system prompt template: the built-in default (Nunjucks, Jinja2-compatible) and its rendering. The variables
 * are upstream's (`workspace`, `display_tree`, `agents_content`) plus `has_agents_md`, `date`, `platform` and
 * `skills_hint`; see {@link PromptArgs}. A user template may use any subset of them.
 *
 * Templates within the small subset the built-in one uses render through `simple-template.ts`, which gives exactly
 * Nunjucks' output; every other template renders through Nunjucks, which is only loaded then: loading it and
 * compiling the built-in template cost ~40 ms of each `crow run`'s start.
 */
import { createRequire } from "node:module";
import type { Environment, Template } from "nunjucks";
import { errorText } from "../error-text.js";
import { parseSimpleTemplate, renderSimpleTemplate, type SimpleTemplate } from "./simple-template.js";

/** The name built-in and user system prompt templates are versioned under in the store. */
export const SYSTEM_PROMPT_NAME = "system_prompt";

/** What a system prompt template is rendered with. All values are JSON (stored with the session). */
export interface PromptArgs {
  /** Absolute workspace path. */
  workspace: string;
  /** The session's other workspace roots, one `- /path` line each ("" for none; absent in older sessions' args). */
  additional_directories?: string;
  /** The directory tree drawing (see `directoryTree`). */
  display_tree: string;
  /** The workspace's AGENTS.md, or upstream's literal "No AGENTS.md found". */
  agents_content: string;
  has_agents_md: boolean;
  /** `YYYY-MM-DD` (UTC) of the session's creation. */
  date: string;
  /** `process.platform` of the agent (linux, darwin, win32). */
  platform: string;
  /** One line about available skills (filled by the skills extension; empty when there are none). */
  skills_hint: string;
  [key: string]: unknown;
}

/** A template that does not parse or render; the message names the template's source. */
export class PromptTemplateError extends Error {
  override name = "PromptTemplateError";
}

let nunjucksEnv: Environment | undefined;

/**
 * Nunjucks and the environment every template renders in, loaded on first use. A synchronous `require` (which the
 * bundler leaves to run time, as for `yaml`) keeps rendering synchronous; the published package therefore depends
 * on `nunjucks` (scripts/pack.mjs).
 */
function nunjucks(): { lib: typeof import("nunjucks"); env: Environment } {
  const lib = createRequire(import.meta.url)("nunjucks") as typeof import("nunjucks");
  // Blocks do not leave blank lines behind; output is never HTML-escaped (a prompt is not a web page). The simple
  // renderer reproduces exactly these settings: change them together.
  nunjucksEnv ??= new lib.Environment(null, { autoescape: false, trimBlocks: true, lstripBlocks: true });
  return { lib, env: nunjucksEnv };
}

/** A template text parsed once: by the simple renderer when it can, by Nunjucks when needed. */
interface Compiled {
  simple: SimpleTemplate | undefined;
  nunjucks?: Template;
}

/** Parsed templates by text: parsing is what costs, and every new session renders the same template again. */
const cache = new Map<string, Compiled>();
const CACHE_SIZE = 16;

function compiled(template: string): Compiled {
  let found = cache.get(template);
  if (!found) {
    found = { simple: parseSimpleTemplate(template) };
    // Outside the subset: compile now, so a syntax error surfaces here, once, rather than on each render.
    if (!found.simple) found.nunjucks = compileNunjucks(template);
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value ?? "");
    cache.set(template, found);
  }
  return found;
}

function compileNunjucks(template: string): Template {
  const { lib, env } = nunjucks();
  // `eagerCompile` so a syntax error surfaces here rather than on the first render.
  return new lib.Template(template, env, undefined, true);
}

/**
 * Renders `template` with `args`, trimmed. Deterministic: the same template and arguments always give the same text,
 * which is what lets a stored session's prompt be reproduced from its prompt version and stored arguments. Throws
 * {@link PromptTemplateError} (naming `source`) when the template does not parse or render.
 */
export function renderTemplate(template: string, args: Record<string, unknown>, source = "template"): string {
  try {
    const entry = compiled(template);
    const fast = entry.simple && renderSimpleTemplate(entry.simple, args);
    if (fast !== undefined) return fast.trim();
    entry.nunjucks ??= compileNunjucks(template);
    return entry.nunjucks.render(args).trim();
  } catch (error) {
    const message = errorText(error).replace(/^\(unknown path\)\s*/, "");
    throw new PromptTemplateError(`system prompt ${source} could not be rendered: ${message}`);
  }
}

/**
 * The built-in system prompt, lean: the guidance every task needs, said once (what a tool does is its description's,
 * what went wrong its error's). The text that is the same for every session comes first and the session's facts
 * (date, workspace, tree, AGENTS.md, skills) last, so that providers' prefix caches share the tools and the first
 * part across sessions too. The fuller prompt of earlier versions is the prompt version `full` (versions.ts).
 */
export const DEFAULT_SYSTEM_PROMPT = `You are Crow, a coding agent working in the user's workspace through tools. Solve the task carefully and \
completely.

- Give file tools absolute paths. Read a file before editing it; prefer small edits to rewrites.
- The terminal keeps its state between calls. Use non-interactive commands and flags.
- Make independent tool calls in parallel. After a failed call, change something before retrying.
- For work of three or more steps, keep a plan with \`todo\` when available.
- Follow the code base's conventions. Make the smallest change that solves the task; leave no stray files.
- Verify your work (build, tests, run it) and say when you could not. Never fake success (mocks, disabled tests).
- Answer questions without changing files. Ask when an ambiguity matters.
- Unless asked: no destructive commands (rm -rf outside the workspace, git reset --hard, force push), no commits or \
pushes. Stop only processes you started, by PID. Never reveal secrets.
- Be concise: say what you changed, how you verified it, and problems you noticed.

Date: {{ date }}
Platform: {{ platform }}
Workspace: {{ workspace }} (relative paths are relative to it)
{% if additional_directories %}
Additional directories, also part of the workspace:
{{ additional_directories }}
{% endif %}
Tree:
{{ display_tree }}
{% if has_agents_md %}

<AGENTS_MD>
The workspace's AGENTS.md; it takes precedence over the guidance above.

{{ agents_content }}
</AGENTS_MD>
{% else %}
The workspace has no AGENTS.md.
{% endif %}
{% if skills_hint %}

<SKILLS>
{{ skills_hint }}
</SKILLS>
{% endif %}`;
