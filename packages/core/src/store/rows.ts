/**
 * Row ↔ record conversions shared by the store's writes (store.ts, history.ts) and its read queries (queries.ts),
 * both ways.
 */
import type { Selectable } from "kysely";
import type { ChatMessage, Usage } from "../messages.js";
import type { ToolDisplay } from "../tools.js";
import type { MessagesTable, PromptsTable, SessionsTable } from "./schema.js";
import type { PromptRecord, SessionPatch, SessionRecord, StoredMessage } from "./types.js";

/** A value as a JSON column (null stays null). */
export const json = (value: unknown): string | null =>
  value === null || value === undefined ? null : JSON.stringify(value);

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
    additionalDirectories: parse<string[]>(row.additional_directories) ?? [],
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The columns a stored message is read from ({@link toMessage}). */
export const MESSAGE_FIELDS = ["seq", "data", "usage", "is_error", "duration_ms", "display", "created_at"] as const;

/**
 * The diffs a display column keeps: up to 1 MiB of text (old and new, UTF-8). A bigger one (a generated file, a
 * lockfile) is left out so one call cannot bloat every load and page of its session: the live view had it, a replay
 * shows what the call's arguments tell (its tool profile's `change.fromArgs`), the rest of the display is kept.
 */
export const MAX_STORED_DIFF_BYTES = 1024 * 1024;

/** A tool result's display as its column: JSON, without a diff over {@link MAX_STORED_DIFF_BYTES}; null for none. */
export function displayColumn(display: ToolDisplay | undefined): string | null {
  if (!display) return null;
  const { diff, ...rest } = display;
  const size = diff ? Buffer.byteLength(diff.newText) + Buffer.byteLength(diff.oldText ?? "") : 0;
  const kept: ToolDisplay = diff && size <= MAX_STORED_DIFF_BYTES ? { ...rest, diff } : rest;
  return Object.keys(kept).length > 0 ? JSON.stringify(kept) : null;
}

export function toMessage(row: Pick<MessagesTable, (typeof MESSAGE_FIELDS)[number]>): StoredMessage {
  const stored: StoredMessage = {
    seq: Number(row.seq),
    message: JSON.parse(row.data) as ChatMessage,
    createdAt: row.created_at,
  };
  const usage = parse<Usage>(row.usage);
  if (usage) stored.usage = usage;
  if (row.is_error !== null && row.is_error !== undefined) {
    stored.outcome = { isError: Number(row.is_error) !== 0, durationMs: Number(row.duration_ms ?? 0) };
    const display = parse<ToolDisplay>(row.display);
    if (display) stored.outcome.display = display;
  }
  return stored;
}

/** A session's additional directories as stored: a JSON list, or null for none. */
export function directoriesColumn(dirs: readonly string[] | null | undefined): string | null {
  return dirs && dirs.length > 0 ? JSON.stringify(dirs) : null;
}

/** The columns a patch sets (undefined fields are left alone). */
export function patchColumns(patch: SessionPatch): Partial<SessionsTable> {
  const set: Partial<SessionsTable> = {};
  if (patch.cwd !== undefined) set.cwd = patch.cwd;
  if (patch.title !== undefined) set.title = patch.title;
  if (patch.mode !== undefined) set.mode = patch.mode;
  if (patch.model !== undefined) set.model = patch.model;
  if (patch.promptId !== undefined) set.prompt_id = patch.promptId;
  if (patch.promptArgs !== undefined) set.prompt_args = json(patch.promptArgs);
  if (patch.systemPrompt !== undefined) set.system_prompt = patch.systemPrompt;
  if (patch.toolDefinitions !== undefined) set.tool_definitions = json(patch.toolDefinitions);
  if (patch.requestParams !== undefined) set.request_params = json(patch.requestParams);
  if (patch.parentId !== undefined) set.parent_id = patch.parentId;
  if (patch.additionalDirectories !== undefined)
    set.additional_directories = directoriesColumn(patch.additionalDirectories);
  return set;
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
