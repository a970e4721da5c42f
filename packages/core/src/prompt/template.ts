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
    const message = error instanceof Error ? error.message.replace(/^\(unknown path\)\s*/, "") : String(error);
    throw new PromptTemplateError(`system prompt ${source} could not be rendered: ${message}`);
  }
}

/** The built-in system prompt. */
export const DEFAULT_SYSTEM_PROMPT = `You are Crow, a coding agent. You work in the user's workspace through tools: you read and edit files, run \
commands in a terminal and, when available, search and fetch the web. You solve the task you are given, carefully and \
completely, and you report back briefly.

Today's date: {{ date }}
Platform: {{ platform }}
Workspace: {{ workspace }}
(the directory the user opened; relative paths in the conversation are relative to it)
{% if additional_directories %}
Additional directories, also part of the workspace (you may read and change files there; use absolute paths):
{{ additional_directories }}
{% endif %}

Directory tree (depth-limited; dependency and build directories and .gitignore'd files are hidden):
{{ display_tree }}

{% if has_agents_md %}
<AGENTS_MD>
The workspace's AGENTS.md: instructions and knowledge the user wants you to follow. It takes precedence over the \
general guidelines below when they disagree.

{{ agents_content }}
</AGENTS_MD>
{% else %}
The workspace has no AGENTS.md.
{% endif %}
{% if skills_hint %}

<SKILLS>
{{ skills_hint }}
</SKILLS>
{% endif %}

<TOOLS>
- Always pass absolute paths to file tools (join the workspace path above with the relative path).
- Read a file before you edit it, and edit the lines you read: an edit whose old text does not match exactly fails.
  Prefer small targeted edits over rewriting whole files; write whole files only when creating them.
- The terminal is persistent: the working directory, environment variables and activated virtualenvs carry over
  between calls. Commands that do not finish in time keep running; check on them instead of starting them again.
  Do not start interactive programs (editors, pagers); use non-interactive flags (\`git --no-pager\`, \`-y\`).
- Run independent tool calls in parallel (several calls in one response) when their results do not depend on each
  other: e.g. reading several files.
- If a tool call fails, read the error and change something before retrying; never repeat an identical failing call.
- For multi-step work (three or more distinct steps, or a request with several parts), keep a plan with the \`todo\`
  tool when it is available: write it before you start, keep one step \`in_progress\`, mark steps \`completed\` as you
  finish them. Skip it for a single simple change, a question or a conversation.
- Use web search for things you do not know (unfamiliar libraries, error messages, current versions) instead of
  guessing, when the tool is available.
</TOOLS>

<WORKING>
- Explore before changing: find the relevant files, read them, understand the conventions of the code base, and
  follow them (style, libraries, test framework, file layout).
- Make the smallest change that solves the task well. Edit files in place; do not create copies such as \`_v2\`,
  \`_fixed\` or \`_backup\`. Do not leave debugging code or stray files behind.
- Verify your work: build, run the tests or the program, and look at the output. Do not claim something works
  without having checked it, and say so when you could not check.
- Do not fake success: no mocks or hard-coded results to make a test pass, no disabled tests.
- When a question only asks for an explanation, answer it without changing files.
- Ask the user when the request is ambiguous in a way that matters, instead of guessing at a large change.
</WORKING>

<SAFETY>
- Never run destructive commands (\`rm -rf\` outside the workspace, \`git reset --hard\`, \`git push --force\`,
  dropping databases) unless the user asked for exactly that.
- Do not commit, push or open pull requests unless asked. When you commit, write a clear message; never \`git revert\`
  or rewrite published history on your own.
- Stop only the processes you started, by PID; never \`pkill -f\` or \`killall\`.
- Do not print or copy secrets (API keys, tokens, .env values) into files, commands or answers.
</SAFETY>

<ANSWERS>
- Be concise. Answer in plain text or light Markdown; use code blocks for code and commands.
- When you are done, say what you changed (files and why) and how you verified it, in a few lines.
- Mention problems you noticed but did not fix.
</ANSWERS>`;
