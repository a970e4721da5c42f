/**
 * A session's system prompt from end to end: which template (the user's override or the built-in), the arguments
 * (workspace, directory tree, AGENTS.md, date…), the version of the template in the store, and the rendered text.
 * `reproduceSystemPrompt` renders a stored session's prompt again from its prompt version and arguments.
 */
import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import { readInside } from "../fs-beneath.js";
import type { PromptRecord, SessionRecord } from "../store/types.js";
import {
  DEFAULT_SYSTEM_PROMPT,
  type PromptArgs,
  PromptTemplateError,
  renderTemplate,
  SYSTEM_PROMPT_NAME,
} from "./template.js";
import { directoryTree, type TreeOptions } from "./tree.js";

/** The file names of a user's override in `<crow home>/prompts/`, in order of preference. */
export const OVERRIDE_FILES = ["system_prompt.njk", "system_prompt.jinja2"] as const;

/** Longest AGENTS.md put into the prompt (characters); longer files are cut with a note. */
export const AGENTS_MD_MAX_CHARS = 40_000;

/** The text upstream's template shows when there is no AGENTS.md (kept for user templates written for upstream). */
export const NO_AGENTS_MD = "No AGENTS.md found";

export interface SystemTemplate {
  content: string;
  /** The override file, or `built-in`. */
  source: string;
}

/**
 * The template new sessions use: `<home>/prompts/system_prompt.njk` (or upstream's `system_prompt.jinja2`) when it
 * exists, else the built-in default.
 */
export async function loadSystemTemplate(home: string): Promise<SystemTemplate> {
  for (const name of OVERRIDE_FILES) {
    const file = path.join(home, "prompts", name);
    try {
      return { content: await readFile(file, "utf8"), source: file };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
  return { content: DEFAULT_SYSTEM_PROMPT, source: "built-in" };
}

/** Which of `files` is the file with this device and inode (a symbolic or hard link to it counts), if any. */
async function sameFileAs(own: { dev: number; ino: number }, files: readonly string[]): Promise<string | undefined> {
  for (const other of files) {
    const theirs = await stat(other).catch(() => undefined);
    if (theirs && theirs.dev === own.dev && theirs.ino === own.ino) return other;
  }
  return undefined;
}

/** Bytes of AGENTS.md read at most (far more than {@link AGENTS_MD_MAX_CHARS} characters can take). */
const AGENTS_MD_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The workspace's `AGENTS.md` (only the workspace root is looked at), capped; undefined when there is none. It is read
 * only as a regular file inside the workspace, checked on the open descriptor (fs-beneath.ts `readInside`): a link to
 * `/proc/self/environ` (Crow's environment, keys included), a device, a FIFO or a file outside — which anything that
 * can write the workspace can plant for the next session or subagent — is left out with a note saying so, and so is
 * one of the `hidden` files (Crow's `.env`, compared by device and inode, so a hard link counts too).
 */
export async function readAgentsMd(
  cwd: string,
  maxChars = AGENTS_MD_MAX_CHARS,
  hidden: readonly string[] = [],
): Promise<string | undefined> {
  const file = path.join(cwd, "AGENTS.md");
  const read = await readInside(cwd, file, AGENTS_MD_MAX_BYTES).catch(() => undefined);
  if (!read) return undefined;
  const secret = read.info && (await sameFileAs(read.info, hidden));
  if (secret) {
    return `[${file} was left out: it is ${secret}, one of Crow's own files, which hold provider keys or session transcripts. Ask the user to replace the link with real instructions.]`;
  }
  if ("refused" in read) {
    return `[${file} was left out: ${read.refused}; only a regular file inside the workspace is read. Ask the user to replace it with real instructions.]`;
  }
  const text = read.bytes.toString("utf8").trim();
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n\n[AGENTS.md truncated: ${text.length - maxChars} more characters in ${file}]`;
}

export interface PromptArgsOptions {
  now?: Date;
  /** The session's workspace roots besides `cwd` (ACP `additionalDirectories`). */
  additionalDirectories?: readonly string[];
  skillsHint?: string;
  tree?: TreeOptions;
  /** Extensions' variables (`registerPromptArgs`); the built-in ones win over them. */
  extraArgs?: Record<string, unknown>;
  /** Files whose text never goes into the prompt (Crow's `.env` and config.yaml), see {@link readAgentsMd}. */
  hidden?: readonly string[];
  /** How the prompt names the workspace and the tree's root when the session's tools see `cwd` elsewhere. */
  shownPaths?: { workspace: string; treeRoot: string };
}

/** The template variable `additional_directories`: one `- /path` line per directory ("" for none). */
export function directoriesArg(dirs: readonly string[]): string {
  return dirs.map((dir) => `- ${dir}`).join("\n");
}

/** The arguments a system prompt for `cwd` is rendered with (reads the tree and AGENTS.md now). */
export async function systemPromptArgs(cwd: string, options: PromptArgsOptions = {}): Promise<PromptArgs> {
  const [tree, agents] = await Promise.all([
    directoryTree(cwd, options.shownPaths ? { ...options.tree, rootLabel: options.shownPaths.treeRoot } : options.tree),
    readAgentsMd(cwd, AGENTS_MD_MAX_CHARS, options.hidden),
  ]);
  return {
    ...options.extraArgs,
    workspace: options.shownPaths?.workspace ?? cwd,
    additional_directories: directoriesArg(options.additionalDirectories ?? []),
    display_tree: tree.text,
    agents_content: agents ?? NO_AGENTS_MD,
    has_agents_md: agents !== undefined,
    date: (options.now ?? new Date()).toISOString().slice(0, 10),
    platform: process.platform,
    skills_hint: options.skillsHint ?? "",
  };
}

/** The part of the store prompts need. */
export interface PromptStore {
  getOrCreatePrompt(name: string, content: string): Promise<PromptRecord>;
  getPrompt(id: string): Promise<PromptRecord | undefined>;
}

/** What a new session records: prompt version, arguments and the rendered text. */
export interface PreparedSystemPrompt {
  promptId: string | null;
  promptArgs: PromptArgs;
  systemPrompt: string;
  /** Where the template came from (`built-in` or the override file). */
  source: string;
  /** Set when the user's template failed and the built-in one was used instead. */
  warning?: string;
}

export interface PrepareOptions extends PromptArgsOptions {
  /** The Crow home directory (where `prompts/` is). */
  home: string;
  /** Versions the template; without one `promptId` is null. */
  store?: PromptStore;
}

/**
 * Prepares the system prompt of a new session in `cwd`: loads the template, renders it, and stores the template as
 * a prompt version (the same content is the same version). A user template that fails to render falls back to the
 * built-in one, with a `warning` to show.
 */
export async function prepareSystemPrompt(cwd: string, options: PrepareOptions): Promise<PreparedSystemPrompt> {
  const [template, args] = await Promise.all([loadSystemTemplate(options.home), systemPromptArgs(cwd, options)]);
  let chosen = template;
  let systemPrompt: string;
  let warning: string | undefined;
  try {
    systemPrompt = renderTemplate(template.content, args, template.source);
  } catch (error) {
    if (!(error instanceof PromptTemplateError) || template.source === "built-in") throw error;
    warning = `${error.message}; using the built-in system prompt instead.`;
    chosen = { content: DEFAULT_SYSTEM_PROMPT, source: "built-in" };
    systemPrompt = renderTemplate(chosen.content, args, chosen.source);
  }
  const record = options.store ? await options.store.getOrCreatePrompt(SYSTEM_PROMPT_NAME, chosen.content) : undefined;
  return {
    promptId: record?.id ?? null,
    promptArgs: args,
    systemPrompt,
    source: chosen.source,
    ...(warning ? { warning } : {}),
  };
}

/**
 * Renders a stored session's system prompt again from its prompt version and arguments. Undefined when the session
 * has no prompt version (sessions created without a store, or before prompts were versioned).
 */
export async function reproduceSystemPrompt(
  store: PromptStore,
  session: Pick<SessionRecord, "promptId" | "promptArgs">,
): Promise<string | undefined> {
  if (!session.promptId || !session.promptArgs) return undefined;
  const prompt = await store.getPrompt(session.promptId);
  if (!prompt) return undefined;
  return renderTemplate(prompt.content, session.promptArgs, prompt.id);
}
