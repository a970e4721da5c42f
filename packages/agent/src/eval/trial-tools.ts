/**
 * The agent's tools in a trial, adjusted to the task as Harbor's container would be:
 *
 * - `[environment] allow_internet = false` also for the web tools: the sandbox takes the network from the shell, but
 *   web_fetch and web_search run in crow-mcp, outside the sandbox, where a session without network still reaches
 *   public addresses. They stay offered (the model sees the tools of any trial) and every call is refused, saying why.
 * - The environment the task's scripts get (the Dockerfile's `ENV`, `[environment.env]`) is the shell's too, and the
 *   shell starts in /app (the Dockerfile's `WORKDIR` when it sets one), not the workspace's host path: before the first terminal command of the session (and before a
 *   `reset`, which starts a fresh shell) a preamble exports them, unseen by the model. A shell the model exits starts
 *   again without them, as a container's `docker exec` would not — the one difference.
 * - The file tools (read, write, edit) take a relative `file_path` from the same directory (elsewhere Crow asks for
 *   absolute paths; in a trial the container's working directory is known).
 */
import path from "node:path";
import type { ResolvedTool, ToolRunContext, ToolSet, ToolSetFactory } from "@crow/core";

/** The file tools, whose `file_path` is resolved from the trial's working directory when relative. */
const FILE_TOOLS = new Set(["read", "write", "edit"]);

/** The tools that reach the network from outside the sandbox. */
const WEB_TOOLS = new Set(["web_fetch", "web_search"]);

/** What a trial's tools follow. */
export interface TrialToolsOptions {
  task: string;
  allowInternet: boolean;
  /** Exported in the agent's shell before its first command. */
  env: Readonly<Record<string, string>>;
  /** Where the shell starts (a directory inside /app). */
  workdir: string;
  /** A directory put first on the shell's PATH (a python image's `python` and `pip`). */
  pathPrefix?: string;
}

/** The refusal a web tool call gets in a trial of a task without internet. */
export function offlineRefusal(tool: string, task: string): string {
  return (
    `${tool} is not available in this trial: task ${task} sets [environment] allow_internet = false in its ` +
    "task.toml, so neither the shell nor the web tools reach the network. Work with what the workspace holds."
  );
}

function quoted(value: string): string {
  return `'${value.replaceAll("'", "'\\''")}'`;
}

/** The shell lines that give the agent's shell the task's environment and working directory (/app or its WORKDIR). */
export function shellPreamble(env: Readonly<Record<string, string>>, workdir: string, pathPrefix?: string): string {
  const lines = Object.entries(env)
    .filter(([name]) => /^[A-Za-z_]\w*$/.test(name))
    .map(([name, value]) => `export ${name}=${quoted(value)}`);
  if (pathPrefix) lines.push(`export PATH=${quoted(pathPrefix)}:"$PATH"`);
  // Always: the shell itself starts in the workspace's host path; the task's paths are the container's.
  lines.push(`cd ${quoted(workdir)}`);
  return lines.join("\n");
}

function adjusted(tools: ToolSet, options: TrialToolsOptions): ToolSet {
  const preamble = shellPreamble(options.env, options.workdir, options.pathPrefix);
  let shellReady = false;
  const resolve = (name: string): ResolvedTool | undefined => {
    const resolved = tools.resolve(name);
    if (!resolved) return resolved;
    const tool = resolved.definition.function.name;
    if (!options.allowInternet && WEB_TOOLS.has(tool)) {
      return { ...resolved, run: async () => ({ content: offlineRefusal(tool, options.task), isError: true }) };
    }
    if (FILE_TOOLS.has(tool)) {
      // A relative file_path is the container's: from the shell's starting directory (/app or WORKDIR), as in
      // Harbor's container, not refused with the workspace's host path as the hint.
      return {
        ...resolved,
        run: (call, context) => {
          const file = call.args.file_path;
          if (typeof file !== "string" || file.trim() === "" || path.posix.isAbsolute(file)) {
            return resolved.run(call, context);
          }
          return resolved.run(
            { ...call, args: { ...call.args, file_path: path.posix.resolve(options.workdir, file) } },
            context,
          );
        },
      };
    }
    if (tool !== "terminal") return resolved;
    return {
      ...resolved,
      run: async (call, context: ToolRunContext) => {
        const reset = call.args.reset === true;
        if (!shellReady || reset) {
          const prepared = await resolved.run(
            { ...call, args: { command: preamble, ...(reset ? { reset: true } : {}) } },
            { signal: context.signal, onProgress: () => {} },
          );
          shellReady = !prepared.isError;
          if (reset) return resolved.run({ ...call, args: { ...call.args, reset: false } }, context);
        }
        return resolved.run(call, context);
      },
    };
  };
  return {
    definitions: () => tools.definitions(),
    resolve,
    ...(tools.failures ? { failures: () => tools.failures?.() ?? [] } : {}),
    ...(tools.close ? { close: () => tools.close?.() ?? Promise.resolve() } : {}),
  };
}

/** `factory`'s tool sets, adjusted to the trial's task (see the module's comment). */
export function trialTools(factory: ToolSetFactory, options: TrialToolsOptions): ToolSetFactory {
  return async (request) => adjusted(await factory(request), options);
}
