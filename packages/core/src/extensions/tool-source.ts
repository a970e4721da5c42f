/**
 * A session's tools as the loop sees them: the extensions' in-process tools next to the session's tool source (the
 * agent's MCP router, or none). An in-process tool wins over a source tool of the same name. Arguments are
 * validated with the tool's zod schema before `execute`; a failure of any kind becomes an `isError` result.
 */
import { z } from "zod";
import type { Crow, CrowSession, ToolSource } from "../api/types.js";
import { errorText } from "../error-text.js";
import type { ToolDefinition } from "../messages.js";
import { findTool, type ToolCallRequest, type ToolKind, type ToolProgress, type ToolResult } from "../tools.js";
import type { ToolRegistration } from "./api.js";
import type { Registered } from "./registry.js";

/** Converted schemas: definitions are listed on every LLM request and zod's conversion is not cheap. */
const converted = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The JSON Schema of a zod schema as tool parameters (without `$schema`, which some providers reject). Converted
 * once per schema object; callers must not mutate the result.
 */
export function toolParameters(schema: z.ZodType): Record<string, unknown> {
  let parameters = converted.get(schema);
  if (!parameters) {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<
      string,
      unknown
    >;
    parameters = rest;
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
  ctx: {
    session: CrowSession;
    crow: Crow;
    signal: AbortSignal;
    onProgress: (progress: ToolProgress) => void;
  },
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
 * The merged executor of one session. `tools` is read on every call, so tools registered while the session is open
 * appear on the next request.
 */
export class SessionTools implements ToolSource {
  constructor(
    private readonly tools: ReadonlyMap<string, Registered<ToolRegistration>>,
    private readonly source: ToolSource | undefined,
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

  definitions(): ToolDefinition[] {
    const own = this.offered().map(({ value }) => toolDefinition(value));
    const names = new Set(own.map((d) => d.function.name));
    const external = (this.source?.definitions() ?? []).filter((d) => !names.has(d.function.name));
    return [...external, ...own];
  }

  /** The registered tool a call resolves to (exact name, then tolerant matching over the merged list). */
  private inProcess(call: ToolCallRequest): Registered<ToolRegistration> | undefined {
    const offered = this.offered();
    const named = (name: string) => offered.find(({ value }) => value.name === name);
    const direct = named(call.tool) ?? named(call.name);
    if (direct) return direct;
    const found = findTool(this.definitions(), call.name);
    return found ? named(found.function.name) : undefined;
  }

  async execute(
    call: ToolCallRequest,
    context: { signal: AbortSignal; onProgress: (progress: ToolProgress) => void },
  ): Promise<ToolResult> {
    const own = this.inProcess(call);
    if (own) return runInProcessTool(own.value, own.extension, call, { ...this.context(), ...context });
    if (!this.source) return { content: `Error: unknown tool "${call.name}".`, isError: true };
    return this.source.execute(call, context);
  }

  failures(): string[] {
    return this.source?.failures?.() ?? [];
  }

  kindOf(name: string): ToolKind | undefined {
    const own = this.tools.get(name);
    if (own) return own.value.kind;
    return this.source?.kindOf?.(name);
  }

  isReadOnly(name: string): boolean | undefined {
    const own = this.tools.get(name);
    if (own) return own.value.readOnly;
    return this.source?.isReadOnly?.(name);
  }

  /** Whether the source's tool runs confined by the operating system (in-process tools never are). */
  isConfined(name: string): boolean {
    if (this.tools.has(name)) return false;
    return this.source?.isConfined?.(name) ?? false;
  }

  async close(): Promise<void> {
    await this.source?.close?.();
  }
}
