/**
 * One edit of a file's text, from the model's arguments to the text to save and the message for the model: framing
 * (BOM, line endings) taken apart and restored, the matcher cascade, and every refusal worded for the model. No I/O:
 * crow-mcp's edit tool runs it on the file it read from disk, the agent on the editor's buffer (`fs/read_text_file`),
 * so both give the model the same answers.
 */
import { runAsync, runSync, type Work, WorkBudget } from "./budget.js";
import { replacementDiff } from "./diff.js";
import { describeIndentShift } from "./indent.js";
import { EditError, type EditOutcome, type MatcherName, searchReplacement } from "./replace.js";
import { countLines, normalizeForEdit, restoreShape } from "./text.js";

/** Files larger than this are not edited (the whole file is held in memory several times). */
export const MAX_EDIT_FILE_SIZE = 10 * 1024 * 1024;

/** The refusal for a file over {@link MAX_EDIT_FILE_SIZE} bytes. */
export function tooLargeToEdit(size: number): string {
  return `Error: File too large to edit: ${size} bytes (max ${MAX_EDIT_FILE_SIZE} bytes). Use the terminal (sed, a script) for files this size.`;
}

/** What each fuzzy matcher tolerated, for the success message. */
const MATCHER_NOTES: Readonly<Record<Exclude<MatcherName, "exact">, string>> = {
  "line-trimmed": "the same lines apart from indentation and surrounding whitespace",
  "block-anchor": "first and last lines equal, the lines between similar but not identical",
  "whitespace-normalized": "the same words with different whitespace or line breaks",
  "indentation-flexible": "the same lines at a different indentation",
  "escape-normalized": 'old_string was escaped once too often (e.g. \\n or \\"); new_string was unescaped the same way',
  "trimmed-boundary": "old_string had leading or trailing whitespace the file does not have",
  "context-aware": "first and last lines equal and at least half of the lines between them",
  "multi-occurrence": "the only occurrence that is not part of a longer word",
};

/** The model's edit: `edit(file_path, old_string, new_string, replace_all)`. */
export interface EditRequest {
  oldString: string;
  newString: string;
  replaceAll: boolean;
}

/** An applied edit: the whole new text (in the file's framing) and the tool's success message. */
export type EditTextResult = { ok: true; text: string; message: string } | { ok: false; error: string };

/**
 * Applies `request` to `text`, the current content of `file` without its byte-order mark (`bom` says whether it had
 * one; it is written back, as are CRLF line endings). A refusal (no match, ambiguous, nothing changes) comes back as
 * the `Error: …` text the tool returns, never thrown.
 */
export function editText(file: string, text: string, bom: boolean, request: EditRequest): EditTextResult {
  return runSync(searchEdit(file, text, bom, request, new WorkBudget()));
}

/**
 * {@link editText} for a thread other work shares (a toolserver serving several sessions, the agent): a long fuzzy
 * search hands the event loop back every few milliseconds (`pause`, a turn of the event loop by default). The
 * result is the same as {@link editText}'s.
 */
export function editTextAsync(
  file: string,
  text: string,
  bom: boolean,
  request: EditRequest,
  pause?: () => Promise<void>,
): Promise<EditTextResult> {
  return runAsync(searchEdit(file, text, bom, request, new WorkBudget()), pause);
}

function* searchEdit(
  file: string,
  text: string,
  bom: boolean,
  request: EditRequest,
  budget: WorkBudget,
): Work<EditTextResult> {
  const { oldString, newString, replaceAll } = request;
  const normalized = normalizeForEdit(text, oldString, newString);
  let outcome: EditOutcome;
  try {
    outcome = yield* searchReplacement(
      normalized.content,
      normalized.oldString,
      normalized.newString,
      replaceAll,
      budget,
    );
  } catch (error) {
    if (error instanceof EditError) {
      const message =
        error.kind === "empty-old"
          ? `old_string is empty, which creates a new file, but ${file} already exists and is not empty. Pass the text to replace as old_string, or use the write tool to replace the whole file.`
          : error.message;
      return { ok: false, error: `Error: ${message}` };
    }
    throw error;
  }
  if (outcome.content === normalized.content) {
    return {
      ok: false,
      error: `Error: No changes made: the text matched by the ${outcome.matcher} matcher is already equal to new_string.`,
    };
  }
  const eol = normalized.eol === "mixed" ? "\n" : normalized.eol;
  const message =
    oldString === ""
      ? `Successfully edited ${file}\nFilled the empty file with ${countLines(newString)} lines.`
      : describeOutcome(file, normalized.content, outcome, replaceAll);
  return { ok: true, text: restoreShape(outcome.content, { bom, eol }), message };
}

/** Upstream's first line, then how the match was made, how many replacements, and the diff. */
function describeOutcome(file: string, before: string, outcome: EditOutcome, replaceAll: boolean): string {
  const count = outcome.replacements.length;
  const first = replaceAll ? `Successfully made replacements in ${file}` : `Successfully edited ${file}`;
  const what = `Replaced ${count} occurrence${count === 1 ? "" : "s"}`;
  let how: string;
  if (outcome.matcher === "exact") {
    how = `${what} (exact match).`;
  } else {
    how = `${what}. old_string did not match exactly; the ${outcome.matcher} matcher found ${MATCHER_NOTES[outcome.matcher]}.`;
    if (outcome.indentShift) {
      const shift = describeIndentShift(outcome.indentShift.from, outcome.indentShift.to);
      how += ` new_string was re-indented (${shift}) to fit.`;
    }
    how += " Check the diff.";
  }
  // The first line names the file: the diff's header would say it twice more.
  const diff = replacementDiff(file, before, outcome.content, outcome.replacements, { header: false });
  return diff === "" ? `${first}\n${how}` : `${first}\n${how}\n\n${diff}`;
}
