/**
 * `ask` mode's question to the user: the permission extension's `askPermission` as an ACP
 * `session/request_permission` request (allow once / allow always / reject).
 */
import { readFile } from "node:fs/promises";
import type { PermissionOption, ToolCallContent, ToolCallUpdate } from "@agentclientprotocol/sdk";
import type { PermissionAnswer, PermissionRequest } from "@crow/core";
import { log } from "../base/log.js";
import { locationsFor, toolCallTitle } from "../tools/data.js";
import type { ClientBridge } from "../tools/types.js";
import type { Outbox } from "./outbox.js";

/**
 * `_meta` key set (true) on a permission request whose "allow" runs the call outside the sandbox. Clients that
 * approve questions on their own (crow run --yes) leave such a request to a person.
 */
export const UNCONFINED_META_KEY = "crow/unconfined";

const OPTIONS: Array<PermissionOption & { answer: PermissionAnswer }> = [
  { optionId: "allow_once", name: "Allow once", kind: "allow_once", answer: "allow_once" },
  { optionId: "allow_always", name: "Always allow", kind: "allow_always", answer: "allow_always" },
  { optionId: "reject", name: "Reject", kind: "reject_once", answer: "reject" },
];

/** Maps the client's answer to the permission extension's; unknown option ids count as a rejection. */
export function permissionAnswer(
  outcome: { outcome: "cancelled" } | { outcome: "selected"; optionId: string },
): PermissionAnswer {
  if (outcome.outcome === "cancelled") return "cancelled";
  return OPTIONS.find((o) => o.optionId === outcome.optionId)?.answer ?? "reject";
}

/**
 * What a call proposes, as tool call content the person can judge before allowing it: the diff of a write (against
 * the editor's buffer when it lends its fs, else the file on disk) or an edit (the whole buffer before and after
 * when the editor lends its fs, else old → new text), or the command a terminal call runs.
 */
export async function proposedContent(
  name: string,
  args: Record<string, unknown>,
  cwd: string,
  editor?: ClientBridge,
): Promise<ToolCallContent[]> {
  if (typeof args.command === "string" && args.command.trim() !== "") {
    return [{ type: "content", content: { type: "text", text: `\`\`\`sh\n${args.command}\n\`\`\`` } }];
  }
  if (name === "edit" && editor?.readTextFile && editor.writeTextFile) {
    // The edit will run on the buffer (tools/router.ts): show exactly what it would make of it.
    const { previewClientEdit } = await import("../tools/client-edit.js");
    const preview = await previewClientEdit(editor, args);
    if (preview) return [{ type: "diff", ...preview }];
  }
  // Loaded with the runtime (initialize must not parse @crow/core); questions only come during turns.
  const { diffFromArgs } = await import("./replay.js");
  const diff = diffFromArgs(name, args, cwd);
  if (diff?.type !== "diff") return [];
  if (diff.oldText !== undefined) return [diff];
  // A write replaces the whole file: diff it against what is there now (none for a new file).
  const current =
    name === "write" && editor?.readTextFile && editor.writeTextFile
      ? editor.readTextFile(diff.path)
      : readFile(diff.path, "utf8");
  const oldText = await current.catch(() => null);
  return [{ ...diff, oldText }];
}

export interface PermissionAskerOptions {
  /**
   * The session's outbox (known once the session is open; questions only come during turns): the proposal and the
   * question go out through it, after the updates of the events before them (the `tool_call` they are about).
   */
  outbox: () => Outbox | undefined;
  /** The session's working directory (relative paths of proposed diffs). */
  cwd: () => string;
  /** The editor's fs, when the client lends it: proposed diffs are computed from its buffers. */
  editor?: () => ClientBridge | undefined;
  /** The call as the session announced it (`tool_call`), by model call id: the question shows that very call. */
  announced: (callId: string) => ToolCallUpdate | undefined;
  /** Called when the user dismissed the question (outcome `cancelled`): the turn ends as cancelled. */
  onCancelled: () => void;
}

/** A call the session did not announce, rendered the way `tool_call` renders one. */
function announce(call: PermissionRequest["call"]): ToolCallUpdate {
  const toolCall: ToolCallUpdate = {
    toolCallId: call.id,
    title: toolCallTitle(call.name, call.args),
    rawInput: call.args,
  };
  const locations = locationsFor(call.name, call.args);
  if (locations.length > 0) toolCall.locations = locations;
  return toolCall;
}

/** Builds `askPermission` for `installPermissions`. A failed request rejects the call (never "allowed"). */
export function permissionAsker(
  options: PermissionAskerOptions,
): (request: PermissionRequest) => Promise<PermissionAnswer> {
  return async ({ call, kind, signal, reason, unconfined }) => {
    const outbox = options.outbox();
    if (!outbox) return "reject";
    // The loop announces every call before it asks about it; the fallback is for an extension asking on its own.
    const toolCall: ToolCallUpdate = { ...(options.announced(call.id) ?? announce(call)), kind, status: "pending" };
    // By the tool it resolved to (the router's choice too), not the model's spelling of it.
    const content = await proposedContent(call.tool, call.args, options.cwd(), options.editor?.()).catch(() => []);
    if (content.length > 0) {
      // The pending call in the thread shows the proposal too, before the question.
      outbox.send({ sessionUpdate: "tool_call_update", toolCallId: toolCall.toolCallId, content });
    }
    // A question the mode alone would not ask (an `ask` rule, the doom-loop guard) says why it comes.
    const why: ToolCallContent[] = reason
      ? [{ type: "content", content: { type: "text", text: `Asked because of ${reason}.` } }]
      : [];
    if (content.length + why.length > 0) toolCall.content = [...why, ...content];
    try {
      const response = await outbox.ask(
        {
          toolCall,
          options: OPTIONS.map(({ answer: _, ...o }) => o),
          // Clients that answer on their own (crow run --yes) must not answer this one: it lifts the sandbox.
          ...(unconfined ? { _meta: { [UNCONFINED_META_KEY]: true } } : {}),
        },
        { cancellationSignal: signal, stopWaitingOnCancel: true },
      );
      const answer = permissionAnswer(response.outcome);
      if (answer === "cancelled") options.onCancelled();
      return answer;
    } catch (error) {
      if (signal.aborted) return "cancelled";
      log.warn(`permission request for ${call.name} failed`, error);
      return "reject";
    }
  };
}
