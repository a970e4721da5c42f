/**
 * Questions to the session's user in the middle of a turn: the `ask_user` tool's, and those a tool server puts
 * (an MCP server's elicitation). A question is a flat form (the fields a person fills in) or a URL to open; the host
 * shows it (an ACP editor through `elicitation/create`, `crow run` in the terminal) and its answer comes back to
 * whoever asked. The runtime knows neither ACP nor MCP: hosts translate both ways.
 */
import { errorText } from "../error-text.js";

/** The value of one answered field: text, a number, a yes/no, or the choices picked in a multi-select. */
export type UserAnswerValue = string | number | boolean | string[];

/** A choice with a label of its own (`const` is the value the answer carries). */
export interface TitledChoice {
  const: string;
  title: string;
}

/** What every field may say about itself. */
interface FieldText {
  title?: string;
  description?: string;
}

/**
 * One field of a question's form: the primitive JSON Schema properties both MCP elicitation and ACP allow. A string
 * with `enum` (or titled `oneOf`) is a single choice; an array of such strings a multi-select.
 */
export type UserFormField =
  | (FieldText & {
      type: "string";
      enum?: string[];
      oneOf?: TitledChoice[];
      default?: string;
      minLength?: number;
      maxLength?: number;
      format?: "email" | "uri" | "date" | "date-time";
    })
  | (FieldText & { type: "number" | "integer"; minimum?: number; maximum?: number; default?: number })
  | (FieldText & { type: "boolean"; default?: boolean })
  | (FieldText & {
      type: "array";
      items: { type: "string"; enum: string[] } | { anyOf: TitledChoice[] };
      minItems?: number;
      maxItems?: number;
      default?: string[];
    });

/** A flat form: named fields, some required. */
export interface UserForm {
  type: "object";
  title?: string;
  description?: string;
  properties: Record<string, UserFormField>;
  required?: string[];
}

/** What a question has whatever its kind. */
interface QuestionBase {
  /** What is asked, for people. */
  message: string;
  /** The model's tool call this question belongs to (the call that is waiting for it), when one does. */
  callId?: string;
  /** Aborted when the question is withdrawn (the turn was cancelled, the asker gave up): the answer is `cancel`. */
  signal: AbortSignal;
}

/** A question to the session's user. */
export type UserQuestion =
  | (QuestionBase & { mode: "form"; form: UserForm })
  /** Open `url` (a sign-in page, a payment…); `id` names it for the completion notice that may follow. */
  | (QuestionBase & { mode: "url"; url: string; id: string });

/** How the user answered. */
export type UserAnswer =
  /** Filled in (form: the values by field name; url: consent to open it). */
  | { action: "accept"; content?: Record<string, UserAnswerValue> }
  /** Said no; `reason` when nobody could be asked (no host that shows questions), for the asker's logs. */
  | { action: "decline"; reason?: string }
  /** Dismissed without a choice, or withdrawn before an answer. */
  | { action: "cancel"; reason?: string };

/** The host side: what it can show, and how it asks. */
export interface UserAsker {
  /** The kinds of question the host can put to a person (an editor may show forms and not open URLs). */
  readonly modes: ReadonlyArray<UserQuestion["mode"]>;
  /** Shows the question and resolves with the answer; rejects when asking failed. */
  ask(question: UserQuestion): Promise<UserAnswer>;
  /** The URL question `id` is done on the asker's side (the sign-in finished): the host may stop showing it. */
  completed?(id: string): void;
}

/** Whether `asker` can put a question of `mode` to a person. */
export function canAsk(asker: UserAsker | undefined, mode: UserQuestion["mode"]): boolean {
  return asker?.modes.includes(mode) === true;
}

/**
 * Puts `question` through `asker`. Never rejects: without an asker that shows this kind of question the answer is a
 * decline with the reason; a withdrawn question is `cancel`; a failure to ask is a decline saying why.
 */
export async function askThrough(asker: UserAsker | undefined, question: UserQuestion): Promise<UserAnswer> {
  if (!asker || !canAsk(asker, question.mode)) {
    const what = question.mode === "url" ? "open a web page for the user" : "show the user a question";
    return { action: "decline", reason: `no one to ask: the client cannot ${what}` };
  }
  if (question.signal.aborted) return { action: "cancel", reason: "the question was withdrawn" };
  try {
    return await asker.ask(question);
  } catch (error) {
    if (question.signal.aborted) return { action: "cancel", reason: "the question was withdrawn" };
    return { action: "decline", reason: `asking the user failed: ${errorText(error)}` };
  }
}
