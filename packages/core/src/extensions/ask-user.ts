/**
 * The `ask_user` tool as a built-in extension: the model asks the user a question in the middle of a task (free
 * text, or one or several of the choices it offers) and the answer is the tool result. The question goes through
 * the session's host like any question to the user (`session.askUser`: an ACP editor's `elicitation/create`, a form
 * in `crow run`'s terminal); the tool is offered only while the host can put one to a person. Cancelling the turn
 * withdraws the question.
 */
import { z } from "zod";
import type { UserAnswer, UserForm, UserFormField } from "../api/user-question.js";
import type { Extension } from "./api.js";

/** The tool's name. */
export const ASK_USER_TOOL = "ask_user";

/** The form field that carries the answer. */
const ANSWER_FIELD = "answer";

const askUserParameters = z.object({
  question: z
    .string()
    .trim()
    .min(1, "must be the question to ask")
    .describe("The question, complete enough to be answered without reading the conversation."),
  choices: z
    .array(z.string().trim().min(1, "must not be empty"))
    .max(20, "offer at most 20 choices")
    .optional()
    .describe("Answers the user picks from. Omit them for a free-text answer."),
  multiSelect: z
    .boolean()
    .optional()
    .describe("With choices: whether the user may pick several (default: exactly one)."),
});

type AskUserArgs = z.infer<typeof askUserParameters>;

const ASK_USER_DESCRIPTION = `Asks the user a question and waits for the answer, without ending your turn. Offer choices when the possible answers are known (set multiSelect to let the user pick several); leave them out for a free-text answer.

Use it when you cannot go on well without the user's decision or knowledge: an ambiguous request, a choice between approaches with different trade-offs, a missing fact only the user has. Do not use it for things you can find out yourself (read files, run commands), to ask for permission to run a tool (the user is asked when needed), or to report progress.`;

/** The form that asks the question: one field, free text, one choice or several. */
export function askUserForm({ choices, multiSelect }: AskUserArgs): UserForm {
  const unique = choices ? [...new Set(choices)] : [];
  let field: UserFormField;
  if (unique.length === 0) field = { type: "string", title: "Answer" };
  else if (multiSelect) field = { type: "array", title: "Choices", items: { type: "string", enum: unique } };
  else field = { type: "string", title: "Choice", enum: unique };
  return { type: "object", properties: { [ANSWER_FIELD]: field }, required: [ANSWER_FIELD] };
}

/** The tool result for the model: what the user answered, or that there is no answer and what to do then. */
export function askUserResult(answer: UserAnswer, args: AskUserArgs): { content: string; isError?: boolean } {
  if (answer.action === "decline") {
    return {
      content:
        "The user declined to answer. Do not ask the same question again: go on with what you know, making your " +
        "assumption explicit, or end your turn and say what you need.",
    };
  }
  if (answer.action === "cancel") {
    return { content: "The question was dismissed before the user answered; no answer was given.", isError: true };
  }
  const value = answer.content?.[ANSWER_FIELD];
  if (Array.isArray(value)) {
    return {
      content: value.length === 0 ? "The user picked none of the choices." : `The user picked: ${value.join(", ")}`,
    };
  }
  if (value === undefined || value === "") return { content: "The user accepted without giving an answer." };
  return { content: `${args.choices?.length ? "The user picked" : "The user answered"}: ${String(value)}` };
}

/** Offers `ask_user` to sessions whose host can show a form to a person. */
export const askUserExtension: Extension = (api) => {
  api.registerTool({
    name: ASK_USER_TOOL,
    description: ASK_USER_DESCRIPTION,
    parameters: askUserParameters,
    kind: "other",
    // Asking changes nothing: no permission question about it, allowed in read-only mode.
    readOnly: true,
    available: (session) => session.canAskUser("form"),
    execute: async (args, { session, callId, signal }) => {
      const answer = await session.askUser({
        mode: "form",
        message: args.question,
        form: askUserForm(args),
        callId,
        signal,
      });
      return askUserResult(answer, args);
    },
  });
};
