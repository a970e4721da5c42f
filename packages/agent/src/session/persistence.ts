/**
 * Persistence, the built-in extension that keeps a session in the store: the session runs it at the two points
 * where a message becomes complete (the user message at turn start, every `message_appended` of the loop — which
 * includes a cancelled turn's partial assistant text and the synthetic results of unanswered tool calls), so a
 * `kill -9` at any moment loses at most the message being streamed. Writes are queued and run one after another,
 * in order, without holding up the turn; `flush()` waits for them (the turn does before it answers, so a client
 * that loads the session right after a prompt sees all of it). A failed write is logged and reported once; the
 * session goes on in memory.
 */
import type { ChatMessage, ContentPart, SessionPatch, Store, Usage } from "@crow/core";
import { log } from "../log.js";

/** What a session needs from its recorder (the Session class only knows this interface). */
export interface MessageRecorder {
  /** Queues a complete message for storage, in history order. */
  record(message: ChatMessage, usage?: Usage): void;
  /** Resolves when everything queued so far is stored (or failed and was logged). */
  flush(): Promise<void>;
}

/** The longest title derived from a first message. */
const TITLE_LENGTH = 80;

/** A session title from the first user message: its first non-empty line, whitespace collapsed, shortened. */
export function titleFrom(content: string | ContentPart[]): string | undefined {
  const text = typeof content === "string" ? content : content.map((p) => (p.type === "text" ? p.text : "")).join("\n");
  const line = text
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .find((l) => l.length > 0);
  if (!line) return undefined;
  return line.length > TITLE_LENGTH ? `${line.slice(0, TITLE_LENGTH - 1).trimEnd()}…` : line;
}

export interface RecorderOptions {
  /** The session's title so far (null: none yet, the first user message gives one). */
  title: string | null;
  /** Called once the title is stored (the ACP layer sends `session_info_update`). */
  onTitle?: (title: string, updatedAt: string) => void;
  /** Called on the first failed write (the ACP layer tells the user). */
  onError?: (message: string) => void;
}

export class SessionRecorder implements MessageRecorder {
  private tail: Promise<void> = Promise.resolve();
  private title: string | null;
  private reported = false;

  constructor(
    private readonly store: Store,
    readonly sessionId: string,
    private readonly options: RecorderOptions = { title: null },
  ) {
    this.title = options.title;
  }

  private enqueue(what: string, write: () => Promise<void>): void {
    this.tail = this.tail.then(write).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      log.error(`session ${this.sessionId}: ${what} was not stored: ${message}`);
      if (!this.reported) {
        this.reported = true;
        this.options.onError?.(`The session could not be saved (${message}); it continues in memory only.`);
      }
    });
  }

  record(message: ChatMessage, usage?: Usage): void {
    this.enqueue(`a ${message.role} message`, async () => {
      await this.store.appendMessages(this.sessionId, [usage ? { message, usage } : { message }]);
    });
    if (message.role === "user" && this.title === null) {
      const title = titleFrom(message.content);
      if (title) {
        this.title = title;
        this.enqueue("the title", async () => {
          const record = await this.store.updateSession(this.sessionId, { title });
          this.options.onTitle?.(title, record.updatedAt);
        });
      }
    }
  }

  /** Queues a change of the session's fields (mode, model, cwd…), in order with the messages. */
  update(patch: SessionPatch): void {
    this.enqueue("a session change", async () => {
      await this.store.updateSession(this.sessionId, patch);
    });
  }

  flush(): Promise<void> {
    return this.tail;
  }
}
