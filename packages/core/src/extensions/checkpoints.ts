/**
 * Workspace checkpoints as a built-in extension: before the first call of a turn that may change files (a tool not
 * marked read-only: write, edit, the terminal, an MCP server's mutating tool) the workspace is snapshotted into its
 * shadow repository, and when the turn ends again, so the store knows what each turn changed. A turn that calls no
 * such tool costs nothing. Also `/rewind` and `_crow/rewind`, over `CrowSession.rewind`.
 */

import type { CrowSession } from "../api/types.js";
import type { ShadowRepos } from "../checkpoints/repos.js";
import { promptHash } from "../checkpoints/rewind.js";
import type { RewindPoint, RewindRequest, RewindScope } from "../checkpoints/types.js";
import { errorText } from "../error-text.js";
import { REWIND_METHOD } from "../methods.js";
import type { CheckpointRecord } from "../store/checkpoint-types.js";
import type { Store } from "../store/types.js";
import { isMutatingKind } from "../tools.js";
import { type Extension, MethodError } from "./api.js";

export { REWIND_METHOD };

export interface CheckpointsExtensionOptions {
  store: Store;
  repos: ShadowRepos;
}

/** The checkpoint of the turn running in a session. */
interface TurnCheckpoint {
  seq: number;
  record: CheckpointRecord;
}

/** Takes the checkpoints (hooks only: the loop knows nothing of git or SQL). */
export function checkpointsExtension(options: CheckpointsExtensionOptions): Extension {
  return (api) => {
    const { store, repos } = options;
    const running = new WeakMap<CrowSession, Promise<TurnCheckpoint | undefined>>();
    // Said once per session and reason (a workspace too big to checkpoint stays so on every turn); logged each time.
    const told = new WeakMap<CrowSession, Set<string>>();
    const failed = (session: CrowSession, error: unknown) => {
      const why = errorText(error);
      api.log.warn(`session ${session.id}: checkpoint failed: ${why}`);
      const said = told.get(session) ?? new Set<string>();
      told.set(session, said);
      if (said.has(why)) return;
      said.add(why);
      session.notify(`No workspace checkpoint (/rewind cannot restore files of this turn): ${why}`, "warning");
    };
    const take = async (session: CrowSession, seq: number): Promise<TurnCheckpoint | undefined> => {
      const message = session.history[seq];
      if (!message) return undefined;
      try {
        const snapshot = await repos.run(
          session.cwd,
          (repo) => repo.snapshot(`before turn ${seq} of ${session.id}`),
          session.additionalDirectories,
        );
        const record = await store.checkpoints.add({
          sessionId: session.id,
          seq,
          promptHash: promptHash(message),
          workspace: session.cwd,
          host: repos.host,
          before: snapshot.commit,
          skipped: snapshot.skipped,
        });
        return { seq, record };
      } catch (error) {
        failed(session, error);
        return undefined;
      }
    };
    api.on("before_tool_call", async ({ kind, tool }, { session }) => {
      // The tool's own read-only claim, as the permission modes use it (resolved once by the loop).
      const mutating = isMutatingKind(kind) || (kind === "other" && tool?.readOnly !== true);
      if (!mutating) return undefined;
      const seq = session.history.findLastIndex((m) => m.role === "user");
      if (seq < 0) return undefined;
      const current = await running.get(session);
      if (current?.seq === seq) return undefined;
      const taking = take(session, seq);
      running.set(session, taking);
      await taking;
      return undefined;
    });
    api.on("turn_end", async (_event, { session }) => {
      const current = await running.get(session);
      running.delete(session);
      if (!current) return;
      try {
        const { record } = current;
        await repos.run(
          record.workspace,
          async (repo) => {
            const after = await repo.snapshot(`after turn ${record.seq} of ${session.id}`);
            const files = await repo.changes(record.before, after.commit);
            await store.checkpoints.finish(record.id, after.commit, files, [...record.skipped, ...after.skipped]);
          },
          session.additionalDirectories,
        );
        // After the turn, in the background (queued before the next snapshot of this workspace).
        repos
          .run(record.workspace, (repo) => repo.packIfDue())
          .catch((error: unknown) => {
            api.log.warn(`packing the checkpoints of ${record.workspace} failed: ${errorText(error)}`);
          });
      } catch (error) {
        failed(session, error);
      }
    });
  };
}

function pointsText(points: readonly RewindPoint[]): string {
  if (points.length === 0) return "Nothing to rewind: the conversation has no messages yet.";
  // Blocks apart and a numbered list, for editors that render replies as Markdown (single newlines run together).
  const lines = points.map((p) => {
    const files = p.files.length === 0 ? "" : `\n   changed after: ${p.files.map((f) => f.path).join(", ")}`;
    return `${p.number}. ${p.text}${files}`;
  });
  return (
    `Messages you can rewind to (to just before one):\n\n${lines.join("\n")}\n\n` +
    "Type `/rewind N [both|files|conversation] [--overwrite|--keep] [--dry-run]`."
  );
}

const SCOPES: readonly RewindScope[] = ["both", "files", "conversation"];

/** What `/rewind N …` asks for: the request, and `keep` (rewind the rest, leaving files changed by others as they are). */
export interface RewindCommand {
  request: RewindRequest;
  keep: boolean;
}

/** `/rewind N [scope] [--overwrite|--keep] [--dry-run]` → the command (message N's seq), or an error text. */
export function parseRewindArgs(args: string, points: readonly RewindPoint[]): RewindCommand | string {
  const words = args.split(/\s+/).filter((w) => w !== "");
  const number = Number(words[0]);
  const point = points.find((p) => p.number === number);
  if (!point) return `No message ${words[0]}: choose one of 1–${points.length} (/rewind lists them).`;
  const request: RewindRequest = { seq: point.seq };
  let keep = false;
  for (const word of words.slice(1)) {
    if (word === "--overwrite") request.overwrite = true;
    else if (word === "--keep") keep = true;
    else if (word === "--dry-run") request.dryRun = true;
    else if ((SCOPES as readonly string[]).includes(word)) request.scope = word as RewindScope;
    else return `Unknown /rewind option "${word}": use both, files, conversation, --overwrite, --keep or --dry-run.`;
  }
  if (keep && request.overwrite) return "/rewind: --overwrite and --keep contradict each other; choose one.";
  return { request, keep };
}

/**
 * Runs `/rewind N …`. Files someone else changed since are never overwritten without saying so: unless the command
 * says `--overwrite` or `--keep`, a dry run comes first, and when it finds such files nothing is rewound and the
 * answer asks which of the two the user wants.
 */
async function runRewindCommand(session: CrowSession, args: string, command: RewindCommand): Promise<string> {
  const { request, keep } = command;
  if (!request.overwrite && !keep && !request.dryRun && request.scope !== "conversation") {
    const plan = await session.rewind({ ...request, dryRun: true });
    if (plan.conflicts.length > 0) {
      const again = `/rewind ${args.replace(/\s+/g, " ").trim()}`;
      return (
        `Nothing rewound yet: ${plan.conflicts.join(", ")} changed since the agent's turn, by someone else.\n` +
        `Type \`${again} --overwrite\` to put them back too, or \`${again} --keep\` to leave them as they are ` +
        "and rewind the rest."
      );
    }
  }
  return (await session.rewind(request)).message;
}

/** `/rewind` and `_crow/rewind` (any session: they use the public `CrowSession.rewind`). */
export const rewindCommands: Extension = (api) => {
  api.registerCommand("rewind", {
    description: "Go back to before one of your messages: files, conversation, or both (lists them without a number)",
    hint: "[N [both|files|conversation] [--overwrite|--keep] [--dry-run]]",
    run: async (args, { session }) => {
      const points = await session.rewindPoints();
      if (args.trim() === "") return pointsText(points);
      const command = parseRewindArgs(args, points);
      if (typeof command === "string") return command;
      return runRewindCommand(session, args, command);
    },
  });
  api.registerMethod(REWIND_METHOD, async (params, { crow: runtime }) => {
    const p = (params ?? {}) as Record<string, unknown>;
    const sessionId = p.sessionId;
    if (typeof sessionId !== "string" || sessionId === "") {
      throw MethodError.invalidParams(`${REWIND_METHOD} expects {"sessionId": "<id>", "seq"?: <number>, ...}`);
    }
    const session = runtime.session(sessionId);
    if (!session) throw MethodError.sessionNotFound(sessionId);
    if (p.seq === undefined) return { points: await session.rewindPoints() };
    if (typeof p.seq !== "number" || (p.scope !== undefined && !SCOPES.includes(p.scope as RewindScope))) {
      throw MethodError.invalidParams(
        `${REWIND_METHOD}: "seq" must be the seq of a user message (from the points) and "scope" one of ${SCOPES.join(", ")}`,
      );
    }
    try {
      return await session.rewind({
        seq: p.seq,
        ...(p.scope ? { scope: p.scope as RewindScope } : {}),
        overwrite: p.overwrite === true,
        dryRun: p.dryRun === true,
      });
    } catch (error) {
      throw MethodError.invalidRequest(errorText(error));
    }
  });
};
