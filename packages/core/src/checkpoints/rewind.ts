/**
 * `/rewind`: back to just before one of the session's user messages — the workspace files, the conversation, or
 * both. Files: only the paths the agent's turns changed since that message, as they were in the snapshot taken
 * before the first of those turns changed anything; a path someone else changed after the agent's last turn touching
 * it, or between two of those turns (the user in the editor), is listed and left alone unless the caller says
 * `overwrite`. Conversation: the history
 * from the message on goes to an archive (never deleted, as in a compaction), with the checkpoints of those turns.
 */
import { stat } from "node:fs/promises";
import { type ChatMessage, contentText } from "../messages.js";
import type { CheckpointFile, CheckpointRecord } from "../store/checkpoint-types.js";
import { promptHash } from "../store/checkpoints.js";
import type { Store } from "../store/types.js";
import type { ShadowRepos } from "./repos.js";
import type { ShadowRepo } from "./shadow-repo.js";
import type { RewindPoint, RewindRequest, RewindResult, RewindScope } from "./types.js";

/** What a rewind changes of a live session. */
export interface RewindTarget {
  readonly id: string;
  /** The live history, cut at the message on a conversation rewind. */
  readonly history: ChatMessage[];
}

export { promptHash };

/** A bad rewind request (no user message there…): the message says what to ask instead. */
export class RewindError extends Error {
  override name = "RewindError";
}

function preview(message: ChatMessage): string {
  const text = message.role === "user" ? contentText(message.content) : "";
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/** The checkpoints that belong to the current history (their seq holds the same user message). */
export function currentCheckpoints(history: readonly ChatMessage[], rows: readonly CheckpointRecord[]) {
  return rows.filter((row) => {
    const message = history[row.seq];
    return message?.role === "user" && promptHash(message) === row.promptHash;
  });
}

/**
 * The user messages of a history, with what the turns after each changed (several after a compaction: the
 * summarized turns' checkpoints stay under the first message).
 */
export function rewindPoints(history: readonly ChatMessage[], rows: readonly CheckpointRecord[]): RewindPoint[] {
  const bySeq = new Map<number, { files: CheckpointFile[] }>();
  for (const row of currentCheckpoints(history, rows)) {
    const files = bySeq.get(row.seq)?.files ?? [];
    for (const file of row.files ?? []) if (!files.some((f) => f.path === file.path)) files.push(file);
    bySeq.set(row.seq, { files });
  }
  const points: RewindPoint[] = [];
  history.forEach((message, seq) => {
    if (message.role !== "user") return;
    points.push({ seq, number: points.length + 1, text: preview(message), files: bySeq.get(seq)?.files ?? [] });
  });
  return points;
}

interface FilePlan {
  restored: string[];
  conflicts: string[];
  skipped: string[];
  refused?: string;
}

/** Works out (and unless `dryRun` does) the file part of a rewind over the checkpoints from the message on. */
async function rewindFiles(
  later: readonly CheckpointRecord[],
  repos: ShadowRepos,
  overwrite: boolean,
  dryRun: boolean,
): Promise<FilePlan> {
  const first = later[0];
  if (!first) return { restored: [], conflicts: [], skipped: [] };
  const foreign = later.find((row) => row.host !== repos.host);
  if (foreign) {
    return {
      restored: [],
      conflicts: [],
      skipped: [],
      refused:
        `the checkpoints were taken on host "${foreign.host}" and their snapshots are on that machine only; ` +
        `rewind the files there (this is "${repos.host}"), or rewind the conversation alone`,
    };
  }
  const refused = await refusal(later, first.workspace);
  if (refused) return { restored: [], conflicts: [], skipped: [], refused };
  return repos.run(first.workspace, async (repo) => {
    const now = await repo.snapshot("before rewind");
    const lastAfter = new Map<string, string>();
    const skipped = new Set<string>();
    for (const row of later) {
      const after = row.after ?? now.commit;
      for (const change of row.files ?? (await repo.changes(row.before, after))) lastAfter.set(change.path, after);
      for (const path of row.skipped) skipped.add(path);
    }
    for (const path of now.skipped) skipped.add(path);
    // Only what differs from the snapshot we go back to needs restoring.
    const differs = new Set((await repo.changes(first.before, now.commit)).map((c) => c.path));
    const conflicts = new Set<string>();
    for (const after of new Set(lastAfter.values())) {
      if (after === now.commit) continue;
      for (const change of await repo.changes(after, now.commit)) {
        if (lastAfter.get(change.path) === after) conflicts.add(change.path);
      }
    }
    for (const path of await changedBetweenTurns(repo, later)) conflicts.add(path);
    const candidates = [...lastAfter.keys()].filter((p) => differs.has(p) && !skipped.has(p)).sort();
    const listed = candidates.filter((p) => conflicts.has(p));
    const restored = candidates.filter((p) => overwrite || !conflicts.has(p));
    if (!dryRun) await repo.restore(first.before, restored);
    return {
      restored,
      conflicts: overwrite ? [] : listed,
      skipped: [...skipped].filter((p) => lastAfter.has(p)).sort(),
    };
  });
}

/**
 * The paths someone other than the agent changed between two of these turns (the user in the editor, another
 * session): what a turn's snapshot before found differing from what the previous turn left. A later turn of the agent
 * touching the same path hides such a change from the working-tree check (it is in neither the agent's before nor its
 * after), so restoring the path would silently discard it. Computed from the snapshots at rewind time (one diff per
 * pair of turns), so a turn costs nothing more. A turn without a snapshot after (it never ended: the process died)
 * counts from its snapshot before: its own changes cannot be told apart from anyone else's, so they are asked about
 * too rather than risk discarding someone else's.
 */
async function changedBetweenTurns(repo: ShadowRepo, later: readonly CheckpointRecord[]): Promise<Set<string>> {
  const changed = new Set<string>();
  for (let i = 1; i < later.length; i++) {
    const previous = later[i - 1];
    const next = later[i]?.before;
    const from = previous?.after ?? previous?.before;
    if (!from || !next || from === next) continue;
    for (const change of await repo.changes(from, next)) changed.add(change.path);
  }
  return changed;
}

/** Why the files of these checkpoints cannot be restored here, if they cannot. */
async function refusal(later: readonly CheckpointRecord[], workspace: string): Promise<string | undefined> {
  const others = [...new Set(later.map((row) => row.workspace))].filter((w) => w !== workspace);
  if (others.length > 0) {
    return `the turns since that message ran in more than one workspace (${[workspace, ...others].join(", ")}); rewind to a later message, or the conversation alone`;
  }
  const there = await stat(workspace).then(
    (info) => info.isDirectory(),
    () => false,
  );
  return there ? undefined : `the workspace the checkpoints are of, ${workspace}, is no longer there`;
}

function describe(result: Omit<RewindResult, "message">, number: number): string {
  const lines: string[] = [];
  const would = result.dryRun ? "Would rewind" : "Rewound";
  if (result.scope !== "files") {
    lines.push(
      `${would} the conversation to before message ${number} (${result.messagesKept} messages kept` +
        `${result.archiveId ? `; the rest is archived as ${result.archiveId}` : ""}).`,
    );
  }
  if (result.scope !== "conversation") {
    if (result.filesRefused) lines.push(`Files not restored: ${result.filesRefused}.`);
    else if (result.restored.length === 0) lines.push("No files to restore.");
    else lines.push(`${result.dryRun ? "Would restore" : "Restored"} ${result.restored.join(", ")}.`);
    if (result.conflicts.length > 0) {
      lines.push(
        `Left alone, changed since by someone other than the agent: ${result.conflicts.join(", ")} ` +
          (result.scope === "files"
            ? "(rewind the files again with overwrite to put them back too)."
            : "(they keep their current content)."),
      );
    }
    if (result.skipped.length > 0) lines.push(`Not captured (over the size cap): ${result.skipped.join(", ")}.`);
  }
  return lines.join("\n");
}

/** Rewinds `target` to just before the user message at `request.seq`. */
export async function rewindSession(
  target: RewindTarget,
  deps: { store: Store | undefined; repos: ShadowRepos | undefined },
  request: RewindRequest,
): Promise<RewindResult> {
  const scope: RewindScope = request.scope ?? "both";
  const dryRun = request.dryRun === true;
  const seq = request.seq;
  const message = target.history[seq];
  if (!Number.isInteger(seq) || message?.role !== "user") {
    throw new RewindError(`there is no user message at seq ${seq}; list the rewind points first`);
  }
  const number = target.history.slice(0, seq + 1).filter((m) => m.role === "user").length;
  const rows = deps.store ? currentCheckpoints(target.history, await deps.store.checkpoints.list(target.id)) : [];
  let files: FilePlan = { restored: [], conflicts: [], skipped: [] };
  if (scope !== "conversation") {
    const later = rows.filter((row) => row.seq >= seq);
    if (later.length > 0 && !deps.repos) files.refused = "checkpoints are turned off in this process";
    else if (deps.repos) files = await rewindFiles(later, deps.repos, request.overwrite === true, dryRun);
  }
  let archiveId: string | undefined;
  if (scope !== "files" && !dryRun) {
    if (deps.store) {
      const stored = await deps.store.loadMessages(target.id);
      const kept = stored.slice(0, seq).map(({ message: m, usage, outcome }) => ({
        message: m,
        ...(usage ? { usage } : {}),
        ...(outcome ? { outcome } : {}),
      }));
      archiveId = await deps.store.replaceMessages(target.id, kept, { checkpointsFrom: seq, kind: "rewind" });
    }
    target.history.splice(seq);
  }
  const result: Omit<RewindResult, "message"> = {
    scope,
    seq,
    dryRun,
    restored: files.restored,
    conflicts: files.conflicts,
    skipped: files.skipped,
    ...(files.refused ? { filesRefused: files.refused } : {}),
    ...(archiveId ? { archiveId } : {}),
    messagesKept: scope === "files" ? target.history.length : seq,
  };
  return { ...result, message: describe(result, number) };
}
