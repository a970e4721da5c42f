/** Row ↔ record conversions shared by the store's writes (store.ts) and its read queries (queries.ts). */
import type { Selectable } from "kysely";
import type { ChatMessage, Usage } from "../messages.js";
import type { MessagesTable, PromptsTable, SessionsTable } from "./schema.js";
import type { PromptRecord, SessionRecord, StoredMessage } from "./types.js";

export function parse<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function toSession(row: Selectable<SessionsTable>): SessionRecord {
  return {
    id: row.id,
    cwd: row.cwd,
    title: row.title,
    mode: row.mode,
    model: row.model,
    promptId: row.prompt_id,
    promptArgs: parse(row.prompt_args),
    systemPrompt: row.system_prompt,
    toolDefinitions: parse(row.tool_definitions),
    requestParams: parse(row.request_params),
    parentId: row.parent_id,
    archivedFrom: row.archived_from,
    forkedFrom: row.forked_from,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toMessage(
  row: Pick<MessagesTable, "seq" | "data" | "usage" | "is_error" | "duration_ms" | "created_at">,
): StoredMessage {
  const stored: StoredMessage = {
    seq: Number(row.seq),
    message: JSON.parse(row.data) as ChatMessage,
    createdAt: row.created_at,
  };
  const usage = parse<Usage>(row.usage);
  if (usage) stored.usage = usage;
  if (row.is_error !== null && row.is_error !== undefined) {
    stored.outcome = { isError: Number(row.is_error) !== 0, durationMs: Number(row.duration_ms ?? 0) };
  }
  return stored;
}

export function toPrompt(row: Selectable<PromptsTable>): PromptRecord {
  return {
    id: row.id,
    name: row.name,
    version: Number(row.version),
    hash: row.hash,
    content: row.content,
    createdAt: row.created_at,
  };
}
