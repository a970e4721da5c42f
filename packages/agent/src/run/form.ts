/**
 * `crow run`'s answer to a question (`elicitation/create`) at the keyboard: the message, then one prompt per field
 * of the flat form (text, number, yes/no, one choice or several by number), or, for a URL question, the address to
 * open. Enter on an empty optional field skips it; Ctrl-D declines the question, Ctrl-C cancels it (and the turn).
 * Everything shown comes from the agent (an MCP server may have written it): control sequences are stripped.
 */
import type { CreateElicitationRequest, CreateElicitationResponse, ElicitationSchema } from "@agentclientprotocol/sdk";
import { stripControls } from "@crow/mcp/control-text";
import type { Keyboard } from "./keyboard.js";

type Property = NonNullable<ElicitationSchema["properties"]>[string];
type Value = string | number | boolean | string[];

/** How the form ended: an answer for the agent, and whether the person pressed Ctrl-C (cancel the turn too). */
export interface FormOutcome {
  response: CreateElicitationResponse;
  interrupted: boolean;
}

/** One field's choices (single or multi-select), as values and labels; undefined for a free field. */
function choicesOf(property: Property): Array<{ value: string; label: string }> | undefined {
  const p = property as {
    enum?: string[] | null;
    oneOf?: Array<{ const: string; title: string }> | null;
    items?: { enum?: string[]; anyOf?: Array<{ const: string; title: string }> };
  };
  const titled = p.oneOf ?? p.items?.anyOf;
  if (titled) return titled.map((c) => ({ value: c.const, label: c.title }));
  const plain = p.enum ?? p.items?.enum;
  return plain?.map((value) => ({ value, label: value }));
}

/** Parses what was typed for a field; a string is the problem to show when it does not fit. */
function parse(property: Property, typed: string): Value | { problem: string } {
  const choices = choicesOf(property);
  if (property.type === "array") {
    const picked: string[] = [];
    for (const part of typed.split(/[\s,]+/).filter(Boolean)) {
      const choice = choices?.[Number(part) - 1];
      if (!choice) return { problem: `${part} is not one of the numbers shown` };
      if (!picked.includes(choice.value)) picked.push(choice.value);
    }
    return picked;
  }
  if (choices) {
    const choice = choices[Number(typed) - 1] ?? choices.find((c) => c.value === typed);
    return choice ? choice.value : { problem: `type one of the numbers 1-${choices.length}` };
  }
  if (property.type === "boolean") {
    if (/^(y|yes)$/i.test(typed)) return true;
    if (/^(n|no)$/i.test(typed)) return false;
    return { problem: "type y or n" };
  }
  if (property.type === "number" || property.type === "integer") {
    const n = Number(typed);
    if (!Number.isFinite(n) || (property.type === "integer" && !Number.isInteger(n))) {
      return { problem: `type ${property.type === "integer" ? "a whole number" : "a number"}` };
    }
    return n;
  }
  return typed;
}

/** The prompt of one field: its title, what to type, whether it may be skipped. */
function fieldPrompt(name: string, property: Property, required: boolean): string {
  const p = property as { title?: string | null; description?: string | null };
  const title = stripControls(p.title ?? name);
  const choices = choicesOf(property);
  const lines: string[] = [];
  if (p.description) lines.push(`  ${stripControls(p.description)}`);
  choices?.forEach((c, i) => {
    lines.push(`    ${i + 1}. ${stripControls(c.label)}`);
  });
  let hint = "";
  if (property.type === "array") hint = " (numbers, separated by commas)";
  else if (choices) hint = ` (1-${choices.length})`;
  else if (property.type === "boolean") hint = " (y/n)";
  else if (property.type === "number" || property.type === "integer") hint = " (a number)";
  const optional = required ? "" : ", Enter to skip";
  return `${lines.map((l) => `${l}\n`).join("")}  ${title}${hint}${optional}: `;
}

/** Asks the question at the keyboard (TTY) and resolves with the answer to send back. */
export async function answerAtKeyboard(
  request: CreateElicitationRequest,
  keyboard: Keyboard,
  show: (text: string) => void,
  signal: AbortSignal,
): Promise<FormOutcome> {
  const ended = (action: "decline" | "cancel", interrupted = false): FormOutcome => ({
    response: { action },
    interrupted,
  });
  show(`? ${stripControls(request.message)}\n`);
  const read = async () => {
    const result = await keyboard.readAnswer(show, signal);
    if (result.kind === "line") return result.text.trim();
    if (result.kind === "eof") show("\n");
    return result;
  };
  if (request.mode === "url" && "url" in request && typeof request.url === "string") {
    show(`  Open: ${stripControls(request.url)}\n  Enter once you opened it, Ctrl-D to decline: `);
    const typed = await read();
    if (typeof typed === "string") return { response: { action: "accept" }, interrupted: false };
    return typed.kind === "eof" ? ended("decline") : ended("cancel", typed.kind === "interrupt");
  }
  const schema = (request as { requestedSchema?: ElicitationSchema }).requestedSchema;
  if (request.mode !== "form" || !schema) {
    show("  crow run cannot show this kind of question: declined.\n");
    return ended("decline");
  }
  show("  (Ctrl-D declines, Ctrl-C cancels)\n");
  const content: Record<string, Value> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const known = ["string", "number", "integer", "boolean", "array"].includes(property.type);
    if (!known) {
      show(`  crow run cannot fill in the field "${stripControls(name)}": declined.\n`);
      return ended("decline");
    }
    for (;;) {
      show(fieldPrompt(name, property, required.has(name)));
      const typed = await read();
      if (typeof typed !== "string")
        return typed.kind === "eof" ? ended("decline") : ended("cancel", typed.kind === "interrupt");
      if (typed === "" && !required.has(name)) break;
      const value = typed === "" ? { problem: "this field is required" } : parse(property, typed);
      if (typeof value === "object" && !Array.isArray(value)) {
        show(`  ${value.problem}\n`);
        continue;
      }
      content[name] = value;
      break;
    }
  }
  return { response: { action: "accept", content }, interrupted: false };
}
