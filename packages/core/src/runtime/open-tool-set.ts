import type { PermissionMode } from "../api/permissions.js";
import type { CrowSession, ToolSetFactory, ToolSetRequest } from "../api/types.js";
import type { ToolSet } from "../tools.js";

/** The external tool set a session gets from `choice` (a factory is called with `request`; false or none: none). */
export async function openToolSet(
  choice: ToolSetFactory | ToolSet | false | undefined,
  request: ToolSetRequest,
): Promise<ToolSet | undefined> {
  if (!choice) return undefined;
  return typeof choice === "function" ? await choice(request) : choice;
}

/**
 * What a session's tool set may ask of the session once it is open (the set is made before the session
 * exists): its current mode (`fallback` until then) and its user.
 */
export function liveSessionAccess(
  live: ReadonlyMap<string, CrowSession>,
  id: string,
  fallback: PermissionMode,
): Pick<ToolSetRequest, "mode" | "askPermission" | "askUser" | "completeUserQuestion"> {
  return {
    mode: () => live.get(id)?.mode ?? fallback,
    askPermission: (asked) => live.get(id)?.askPermission(asked) ?? Promise.resolve("reject"),
    askUser: (question) =>
      live.get(id)?.askUser(question) ??
      Promise.resolve({ action: "decline", reason: "the session is not open: no one to ask" }),
    completeUserQuestion: (questionId) => live.get(id)?.completeUserQuestion(questionId),
  };
}
