/**
 * The table of crow-mcp's tools: each one's name as the model sees it and a one-line summary, in the order they are
 * registered and listed. The server's instructions (server.ts) and `--help` (args.ts) are made from it, index.ts
 * registers by it, and test/tool-lists.test.ts checks it against what a client lists. Names and words only, so the
 * command line can print it without loading a tool.
 */
export const TOOL_LIST = [
  { name: "read", summary: "read a file with line numbers (paged with offset/limit); images are returned as images." },
  { name: "write", summary: "create or overwrite a whole file." },
  { name: "edit", summary: "replace an exact (or nearly exact) snippet in a file; read the file first." },
  {
    name: "terminal",
    summary: "run commands in one persistent bash shell (cwd, env and venv persist between calls).",
  },
  { name: "web_search", summary: "search the web through SearXNG, several queries at once." },
  { name: "web_fetch", summary: "fetch a URL as readable Markdown, paged with start_index." },
] as const;

/** A crow-mcp tool's name. */
export type ToolName = (typeof TOOL_LIST)[number]["name"];

/** The tools' names, comma-separated, in table order. */
export const TOOL_NAMES = TOOL_LIST.map((tool) => tool.name).join(", ");

/** What a client is told of the server (MCP `instructions`): one line per tool. */
export const INSTRUCTIONS = `Crow's coding tools. Use absolute paths.\n${TOOL_LIST.map((tool) => `- ${tool.name}: ${tool.summary}`).join("\n")}`;
