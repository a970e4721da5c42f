import type { PermissionMode } from "../api/permissions.js";
import type { CrowSession, ToolSource, ToolSourceFactory, ToolSourceRequest } from "../api/types.js";

/** The tool source a session gets from `choice` (a factory is called with `request`; false or none: no source). */
export async function openToolSource(
  choice: ToolSourceFactory | ToolSource | false | undefined,
  request: ToolSourceRequest,
): Promise<ToolSource | undefined> {
  if (!choice) return undefined;
  return typeof choice === "function" ? await choice(request) : choice;
}

/**
 * What a session's tool source may ask of the session once it is open (the source is made before the session
 * exists): its current mode (`fallback` until then) and its user.
 */
export function liveSessionAccess(
  live: ReadonlyMap<string, CrowSession>,
  id: string,
  fallback: PermissionMode,
): Pick<ToolSourceRequest, "mode" | "askPermission" | "askUser" | "completeUserQuestion"> {
  return {
    mode: () => live.get(id)?.mode ?? fallback,
    askPermission: (asked) => live.get(id)?.askPermission(asked) ?? Promise.resolve("reject"),
    askUser: (question) =>
      live.get(id)?.askUser(question) ??
      Promise.resolve({ action: "decline", reason: "the session is not open: no one to ask" }),
    completeUserQuestion: (questionId) => live.get(id)?.completeUserQuestion(questionId),
  };
}
