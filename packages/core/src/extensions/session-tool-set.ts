/**
 * A session's tools as the loop sees them: the extensions' in-process tools next to the session's external tool set
 * (the agent's MCP router, or none). An in-process tool wins over an external tool of the same name. Arguments are
 * validated with the tool's zod schema before `execute`; a failure of any kind becomes an `isError` result.
 */
import { z } from "zod";
import type { Crow, CrowSession } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { ToolDefinition } from "../messages.js";
import { usesFullToolTexts, withFullToolTexts } from "../prompt/versions.js";
import { compactSchema } from "../tool-schema.js";
import {
  callDisplay,
  type ExternalSkills,
  findTool,
  type ResolvedTool,
  type ToolCallRequest,
  type ToolResult,
  type ToolRunContext,
  type ToolSet,
  toolKind,
} from "../tools.js";
import type { ToolRegistration } from "./api.js";
import { deferredOf, FIND_TOOLS, findToolsTool, loadedTools } from "./deferred-tools.js";
import type { Registered } from "./registry.js";

/** Converted schemas: definitions are listed on every LLM request and zod's conversion is not cheap. */
const converted = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The JSON Schema of a zod schema as tool parameters, compacted ({@link compactSchema}). Converted
 * once per schema object; callers must not mutate the result.
 */
export function toolParameters(schema: z.ZodType): Record<string, unknown> {
  let parameters = converted.get(schema);
  if (!parameters) {
    parameters = compactSchema(
      z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>,
    );
    converted.set(schema, parameters);
  }
  return parameters;
}

/** The function definition the model sees for an in-process tool. */
export function toolDefinition(tool: ToolRegistration): ToolDefinition {
  return {
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: toolParameters(tool.parameters) },
  };
}

/** Runs one in-process tool call: validate, execute, normalise. Never throws. */
export async function runInProcessTool(
  tool: ToolRegistration,
  extension: string,
  call: ToolCallRequest,
  ctx: ToolRunContext & { session: CrowSession; crow: Crow },
): Promise<ToolResult> {
  const parsed = tool.parameters.safeParse(call.args);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join(".") || "(arguments)"}: ${i.message}`).join("; ");
    return { content: `Error: invalid arguments for ${tool.name}: ${problems}`, isError: true };
  }
  try {
    const out = await tool.execute(parsed.data, { ...ctx, callId: call.id });
    if (typeof out === "string") return { content: out };
    if (!out || (typeof out.content !== "string" && !Array.isArray(out.content))) {
      return { content: `Error: ${tool.name} returned no content.`, isError: true };
    }
    return out;
  } catch (error) {
    return { content: `Error: ${tool.name} (extension ${extension}) failed: ${errorText(error)}`, isError: true };
  }
}

/**
 * The tools of one session: the extensions' in-process tools next to the session's external tool set (the agent's
 * router, or none). `tools` is read on every call, so tools registered while the session is open appear on the next
 * request.
 */
export class SessionToolSet implements ToolSet {
  /** The current `find_tools` and the deferred tools it was made for (see {@link deferring}). */
  private findTools: { deferred: ToolDefinition[]; tool: ToolRegistration } | undefined;

  constructor(
    private readonly tools: ReadonlyMap<string, Registered<ToolRegistration>>,
    private readonly external: ToolSet | undefined,
    private readonly context: () => { session: CrowSession; crow: Crow },
  ) {}

  /** The in-process tools the session gets now (see `ToolRegistration.available`). */
  private offered(): Array<Registered<ToolRegistration>> {
    const all = [...this.tools.values()];
    if (all.every(({ value }) => !value.available)) return all;
    const { session } = this.context();
    const available = (tool: ToolRegistration): boolean => {
      try {
        return tool.available?.(session) ?? true;
      } catch {
        return false; // isolated like any extension failure: a tool that cannot say is not offered
      }
    };
    return all.filter(({ value }) => available(value));
  }

  /**
   * The tools offered on the next request: the external set's, then the in-process ones; when the external set's
   * deferrable tools are many, those are left out but for the ones loaded so far, and `find_tools` (which lists and
   * loads them) comes after the in-process tools, the loaded tools last, in the order they were loaded: a load adds
   * to the end of the list and leaves what came before it as it was.
   */
  definitions(): ToolDefinition[] {
    const own = this.offered().map(({ value }) => toolDefinition(value));
    const external = this.externalDefinitions(own);
    const deferring = this.deferring(external);
    let all = [...external, ...own];
    if (deferring) {
      const deferred = new Set(deferring.deferred);
      const loaded = loadedTools(this.context().session.history, deferring.deferred);
      all = [...external.filter((d) => !deferred.has(d)), ...own, toolDefinition(deferring.tool), ...loaded];
    }
    // The prompt version `full` brings the built-in tools' fuller texts along (prompt/versions.ts).
    return usesFullToolTexts(this.context().session.systemPrompt) ? withFullToolTexts(all) : all;
  }

  /** The external set's tools but for those an in-process tool of `own` shadows. */
  private externalDefinitions(own: readonly ToolDefinition[]): ToolDefinition[] {
    const names = new Set(own.map((d) => d.function.name));
    return (this.external?.definitions() ?? []).filter((d) => !names.has(d.function.name));
  }

  /**
   * The deferred tools and the `find_tools` tool that loads them, or undefined while nothing is deferred. The tool is
   * made again only when the deferred list changed (its definition is converted and compared once per request).
   */
  private deferring(
    external: readonly ToolDefinition[],
  ): { deferred: ToolDefinition[]; tool: ToolRegistration } | undefined {
    const deferrable = this.external?.deferrable?.bind(this.external);
    const deferred = deferrable ? deferredOf(external, deferrable) : [];
    if (deferred.length === 0 || this.offered().some(({ value }) => value.name === FIND_TOOLS)) {
      this.findTools = undefined;
      return undefined;
    }
    const same =
      this.findTools?.deferred.length === deferred.length && this.findTools.deferred.every((d, i) => d === deferred[i]);
    if (!same || !this.findTools) {
      const tool = findToolsTool(deferred, (callId) => {
        const loaded = loadedTools(this.context().session.history, deferred, callId);
        return new Set(loaded.map((d) => d.function.name));
      });
      this.findTools = { deferred, tool };
    }
    return this.findTools;
  }

  /**
   * Exact names first (an in-process tool wins over an external one of the same name), then tolerant matching over
   * the merged list, so an ambiguity between the two sides is one too.
   */
  resolve(name: string): ResolvedTool | undefined {
    // Only the tools offered now: one that is not available (ask_user without someone to ask) is not run either.
    const offered = new Map(this.offered().map((registered) => [registered.value.name, registered]));
    const own = [...offered.values()].map((r) => toolDefinition(r.value));
    const external = this.externalDefinitions(own);
    const finder = this.deferring(external);
    if (finder) {
      offered.set(FIND_TOOLS, { value: finder.tool, extension: "crow" });
      own.push(toolDefinition(finder.tool));
    }
    const mine = offered.get(name);
    if (mine) return this.inProcess(mine);
    const exact = this.external?.definitions().some((d) => d.function.name === name);
    if (exact) return this.external?.resolve(name);
    // Tolerant matching over every tool, deferred ones too: a model that calls one before loading it is served.
    const found = findTool([...external, ...own], name)?.function.name;
    if (found === undefined) return undefined;
    const registered = offered.get(found);
    return registered ? this.inProcess(registered) : this.external?.resolve(found);
  }

  private inProcess({ value: tool, extension }: Registered<ToolRegistration>): ResolvedTool {
    return {
      definition: toolDefinition(tool),
      kind: tool.kind ?? toolKind(tool.name),
      ...(tool.readOnly !== undefined ? { readOnly: tool.readOnly } : {}),
      display: (args) => tool.display?.(args) ?? callDisplay(tool.name, args),
      run: (call, context) => runInProcessTool(tool, extension, call, { ...this.context(), ...context }),
    };
  }

  failures(): string[] {
    return this.external?.failures?.() ?? [];
  }

  /** The external tool set's skills; undefined when it serves none (in-process tools only, or no provider). */
  externalSkills(signal?: AbortSignal): Promise<ExternalSkills> | undefined {
    return this.external?.skills?.(signal);
  }

  async close(): Promise<void> {
    await this.external?.close?.();
  }
}
