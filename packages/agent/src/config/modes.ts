import type { PermissionMode } from "@crow/core";

/** The session modes (DESIGN.md §3), as offered to the client. Kept apart from the runtime so it loads lazily. */
export const MODES: ReadonlyArray<{ id: PermissionMode; name: string; description: string }> = [
  { id: "code", name: "Code", description: "Tools run without asking." },
  { id: "ask", name: "Ask", description: "Edits and commands wait for your permission." },
  { id: "read-only", name: "Read-only", description: "Edits and commands are refused." },
];
