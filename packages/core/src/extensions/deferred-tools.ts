/**
 * Deferred tools: when the tools that may wait (other MCP servers' tools, see `ToolSet.deferrable`) would take more
 * than {@link DEFER_TOOLS_OVER_BYTES} of every request, the model gets their names with one-line summaries in the
 * description of one tool, `find_tools`, and a tool's full definition joins the list only once the model has loaded
 * it. Crow's own tools (crow-mcp's and the extensions') are never deferred.
 *
 * What is loaded is read back from the history (the `find_tools` calls in it), never kept beside it: the tool list of
 * a resumed session is the one it had, so the provider's prefix cache survives a restart, and a compaction or a
 * rewind forgets the loads with the calls that made them.
 */
import { z } from "zod";
import type { ChatMessage, ToolDefinition } from "../messages.js";
import { findTool } from "../tools.js";
import type { ToolRegistration } from "./api.js";

/** The name the model calls to load deferred tools. */
export const FIND_TOOLS = "find_tools";

/**
 * Deferrable definitions bigger than this (their JSON, in bytes; about 6k tokens) are deferred. Below it, a tool
 * that is there when needed is worth more than the bytes (loading one costs a round trip).
 */
export const DEFER_TOOLS_OVER_BYTES = 24_000;

/** At most this many tools are loaded by one `query`. */
const QUERY_LOADS = 5;

/** The longest one-line summary of a deferred tool, in characters. */
const SUMMARY_CHARS = 100;

const findToolsParameters = z.object({
  names: z.array(z.string()).optional().describe("Exact tool names to load"),
  query: z.string().optional().describe("Words to search tool names and descriptions for"),
});

type FindToolsArgs = z.infer<typeof findToolsParameters>;

/** The first line (or sentence) of a description, capped at {@link SUMMARY_CHARS}. */
function summary(description: string): string {
  const line = description.trim().split("\n")[0] ?? "";
  const sentence = /^(.*?[.!?])(\s|$)/.exec(line)?.[1] ?? line;
  return sentence.length > SUMMARY_CHARS ? `${sentence.slice(0, SUMMARY_CHARS - 1)}…` : sentence;
}

/** The deferred tools a `find_tools` call selects, in the order of `deferred`: its names, else its query's best. */
export function selectTools(deferred: readonly ToolDefinition[], args: FindToolsArgs): ToolDefinition[] {
  const names = new Set(args.names ?? []);
  const named = deferred.filter((d) => names.has(d.function.name));
  const words = (args.query ?? "")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 1);
  if (words.length === 0) return named;
  const scored = deferred
    .filter((d) => !names.has(d.function.name))
    .map((d, index) => {
      const name = d.function.name.toLowerCase();
      const text = `${name} ${(d.function.description ?? "").toLowerCase()}`;
      // A word in the name counts more than one in the description.
      const score = words.reduce((sum, w) => sum + (name.includes(w) ? 3 : text.includes(w) ? 1 : 0), 0);
      return { d, index, score };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, QUERY_LOADS);
  const found = new Set(scored.map((s) => s.d));
  return deferred.filter((d) => names.has(d.function.name) || found.has(d));
}

/** Whether a name as the model wrote it is `find_tools` (as the tool set resolves names: `functions.find_tools`). */
function isFindTools(name: string): boolean {
  return findTool([{ type: "function", function: { name: FIND_TOOLS, parameters: {} } }], name) !== undefined;
}

/** A `find_tools` call's arguments from its JSON text; undefined when they are not its arguments. */
function callArgs(text: string): FindToolsArgs | undefined {
  try {
    const parsed = findToolsParameters.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The deferred tools the history's `find_tools` calls loaded, in the order they were first loaded; a call whose id is
 * `except` does not count (the one running now).
 */
export function loadedTools(
  history: readonly ChatMessage[],
  deferred: readonly ToolDefinition[],
  except?: string,
): ToolDefinition[] {
  const loaded: ToolDefinition[] = [];
  const seen = new Set<string>();
  for (const message of history) {
    if (message.role !== "assistant") continue;
    for (const call of message.tool_calls ?? []) {
      if (!isFindTools(call.function.name) || call.id === except) continue;
      const args = callArgs(call.function.arguments);
      if (!args) continue;
      for (const tool of selectTools(deferred, args)) {
        if (seen.has(tool.function.name)) continue;
        seen.add(tool.function.name);
        loaded.push(tool);
      }
    }
  }
  return loaded;
}

/** The tools of `external` that are deferred now: the deferrable ones, when they are over the threshold. */
export function deferredOf(
  external: readonly ToolDefinition[],
  deferrable: (name: string) => boolean,
): ToolDefinition[] {
  const candidates = external.filter((d) => deferrable(d.function.name));
  const bytes = candidates.reduce((sum, d) => sum + Buffer.byteLength(JSON.stringify(d)), 0);
  return bytes > DEFER_TOOLS_OVER_BYTES ? candidates : [];
}

/**
 * The `find_tools` tool over `deferred` (the tools it can load, summarised in its description) and `loaded` (read
 * when it runs: the names loaded before the call of that id). Read-only: it changes nothing but the next request's tool list.
 */
export function findToolsTool(
  deferred: readonly ToolDefinition[],
  loaded: (callId: string) => ReadonlySet<string>,
): ToolRegistration<typeof findToolsParameters> {
  const list = deferred.map((d) => `- ${d.function.name}: ${summary(d.function.description ?? "")}`).join("\n");
  return {
    name: FIND_TOOLS,
    description: `Loads tools into your tool list; call a tool below only after loading it. Pass names, or a query.\n${list}`,
    parameters: findToolsParameters,
    kind: "search",
    readOnly: true,
    execute(args, ctx) {
      const picked = selectTools(deferred, args);
      if (picked.length === 0) {
        const asked = [...(args.names ?? []), ...(args.query ? [`"${args.query}"`] : [])].join(", ");
        return {
          content: `Error: no tool to load matches ${asked || "nothing (pass names or a query)"}. The tools to load are listed in ${FIND_TOOLS}'s description.`,
          isError: true,
        };
      }
      const already = loaded(ctx.callId);
      const fresh = picked.filter((d) => !already.has(d.function.name)).map((d) => d.function.name);
      const old = picked.filter((d) => already.has(d.function.name)).map((d) => d.function.name);
      return [
        ...(fresh.length > 0 ? [`Loaded ${fresh.join(", ")}: in your tool list from now on.`] : []),
        ...(old.length > 0 ? [`Already loaded: ${old.join(", ")}.`] : []),
      ].join(" ");
    },
  };
}
