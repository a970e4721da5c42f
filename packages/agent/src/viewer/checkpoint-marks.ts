/**
 * Checkpoint marks on the timeline: under each user message whose turn took a workspace checkpoint, the files the
 * turn changed and, when this host holds the shadow repository, the diff itself (collapsed).
 */
import type { CheckpointRecord, Store, StoredMessage } from "@crow/core";
import { checkpointPatch, promptHash } from "@crow/core/internal";
import { html, type SafeHtml } from "./html.js";

/** The marks of a stretch of a session's history, by the seq of the user message they follow. */
export type MarkLoader = (sessionId: string, messages: readonly StoredMessage[]) => Promise<Map<number, SafeHtml>>;

function mark(record: CheckpointRecord, patch: string | undefined): SafeHtml {
  const files = record.files ?? [];
  const list = files.map((f) => `${f.status} ${f.path}`).join(", ");
  const what =
    record.files === null
      ? "checkpoint (the turn did not finish)"
      : files.length === 0
        ? "checkpoint · no file changed"
        : `checkpoint · ${files.length} file${files.length === 1 ? "" : "s"} changed: ${list}`;
  if (patch === undefined || files.length === 0) return html`<div class="checkpoint">${what}</div>`;
  return html`<details class="checkpoint"><summary>${what}</summary><pre class="diff">${patch}</pre></details>`;
}

/** Reads the checkpoints from the store; the diffs from `<home>/checkpoints/` when `home` is given. */
export function checkpointMarks(store: Store, home: string | undefined): MarkLoader {
  return async (sessionId, messages) => {
    const marks = new Map<number, SafeHtml>();
    const users = new Map(messages.filter((m) => m.message.role === "user").map((m) => [m.seq, m.message]));
    if (users.size === 0) return marks;
    for (const record of await store.checkpoints.list(sessionId)) {
      const message = users.get(record.seq);
      if (!message || promptHash(message) !== record.promptHash) continue;
      const patch = home ? await checkpointPatch(home, record) : undefined;
      // Several turns' checkpoints can sit at one message (a compaction keeps them at the first prompt): all shown.
      const before = marks.get(record.seq);
      marks.set(record.seq, before ? html`${before}${mark(record, patch)}` : mark(record, patch));
    }
    return marks;
  };
}
