/**
 * The system prompt. A fixed text for now; the context issue replaces it with the versioned Nunjucks template
 * (directory tree, AGENTS.md, skills hint).
 */
export function systemPrompt(cwd: string, now: Date = new Date()): string {
  return [
    "You are Crow, a coding agent working in the user's workspace through tools.",
    `Workspace: ${cwd}`,
    `Date: ${now.toISOString().slice(0, 10)}`,
    "Use the tools to read, edit and run code; prefer small, verifiable steps. Paths are relative to the workspace",
    "unless absolute. When the task is done, answer briefly with what you did.",
  ].join("\n");
}
