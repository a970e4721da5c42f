/**
 * Upstream's config.yaml keys that Crow does not take as they are: keys it refuses (with what replaced them), and the
 * tool-name keys (`TERMINAL_TOOL`…), accepted only when they name the tool they already are. Checked on the
 * interpolated tree before the schema, so each problem names its key and says what to write instead.
 */
import type { ToolDefinition } from "@crow/core";
import { findTool } from "@crow/core/internal";

/** Keys upstream's files carry that Crow refuses, with what the user should do instead. */
const REMOVED: Readonly<Record<string, string>> = {
  N_STEPS_BACK_COMPACT:
    "no longer accepted (upstream read it but never used it): compaction keeps the first user message, a summary of " +
    "what came between, and the last user message with everything after it, verbatim; remove the key " +
    "(MAX_COMPACT_TOKENS sets when compaction runs)",
};

/**
 * Upstream's tool-name keys and the crow-mcp tool each one names. Upstream used them to pick which of the model's
 * tools goes to the editor's terminal or file system; Crow routes crow-mcp's own tools by their names, so a key is
 * accepted when it names that very tool in any spelling the model could use (`crow-mcp_terminal`, upstream's shipped
 * default, or `terminal`, what its `init` writes).
 */
const TOOL_NAME_KEYS: Readonly<Record<string, string>> = {
  TERMINAL_TOOL: "terminal",
  WRITE_TOOL: "write",
  READ_TOOL: "read",
  EDIT_TOOL: "edit",
  SEARCH_TOOL: "web_search",
  FETCH_TOOL: "web_fetch",
};

function definition(name: string): ToolDefinition {
  return { type: "function", function: { name, description: "", parameters: {} } };
}

/**
 * Renaming a tool is refused rather than done: models are trained on upstream's tool names (DESIGN.md), and the
 * permission rules, skills, the system prompt and the other tools' descriptions name the tools as they are, so a
 * renamed `terminal` would slip past a `terminal(git push*)` deny rule and leave the model reading about a tool it
 * does not have.
 */
function renamed(key: string, value: string, tool: string): string {
  return (
    `${key}: "${value}" is not crow-mcp's ${tool} tool, and Crow does not rename tools (models know them by ` +
    `these names, and permission rules, skills and the tools' descriptions use them); remove the key, or write "${tool}"`
  );
}

/**
 * The problems of a config.yaml tree with upstream's keys, one `KEY: message` line each, and the tree without the
 * refused keys (so the schema reports only the other problems).
 */
export function upstreamKeyProblems(tree: Record<string, unknown>): {
  problems: string[];
  rest: Record<string, unknown>;
} {
  const problems: string[] = [];
  const rest: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(tree)) {
    const removed = REMOVED[key];
    if (removed !== undefined) {
      // An empty value (the key commented out after the colon) is absent, as everywhere in the file.
      if (value !== null && value !== undefined) problems.push(`${key}: ${removed}`);
      continue;
    }
    const tool = TOOL_NAME_KEYS[key];
    if (tool !== undefined && typeof value === "string" && value !== "") {
      if (findTool([definition(tool)], value.trim()) === undefined) problems.push(renamed(key, value, tool));
    }
    rest[key] = value;
  }
  return { problems, rest };
}
