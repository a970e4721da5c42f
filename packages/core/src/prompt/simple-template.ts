/**
 * A renderer for the small Jinja subset the built-in system prompt uses — `{{ name }}` and
 * `{% if name %}…{% else %}…{% endif %}` (nested) — that gives byte for byte what Nunjucks 3.2 gives with the
 * environment `template.ts` configures (`autoescape: false, trimBlocks: true, lstripBlocks: true`).
 *
 * Why: compiling the built-in template with Nunjucks (and loading Nunjucks at all) cost ~40 ms of every `crow run`
 * before its first LLM request. Stored sessions' prompts are rendered again from template and arguments
 * (`reproduceSystemPrompt`), so this must never differ from Nunjucks: anything it is not sure about — a template
 * outside the subset, or a value it does not print the way Nunjucks does — is declined (`undefined`), and the caller
 * renders with Nunjucks instead. The differential tests in `packages/core/test/simple-template.test.ts` hold it to that.
 */

/** `{% if cond %}ifTrue{% else %}ifFalse{% endif %}`. */
interface IfPiece {
  cond: string;
  ifTrue: Piece[];
  ifFalse: Piece[];
}

/** One piece of a parsed template: text, `{{ name }}`, or an `if`. */
type Piece = string | { name: string } | IfPiece;

/** A template parsed by {@link parseSimpleTemplate}; render it with {@link renderSimpleTemplate}. */
export interface SimpleTemplate {
  readonly pieces: readonly Piece[];
}

/**
 * Names this renderer leaves to Nunjucks: Nunjucks' lexer reads some as literals or operators (`true`, `none`,
 * `not`…); the environment's globals (`range`, `cycler`, `joiner`) show through when the arguments lack them; and
 * Nunjucks looks names up in plain objects, so `Object.prototype`'s members (`constructor`, `__proto__`…) resolve.
 */
const KEYWORDS = new Set(["and", "or", "not", "in", "is", "if", "else", "elif", "true", "false", "none", "null"]);
export const NUNJUCKS_GLOBALS: readonly string[] = ["range", "cycler", "joiner"];

function plainName(name: string): boolean {
  return !KEYWORDS.has(name) && !NUNJUCKS_GLOBALS.includes(name) && !(name in Object.prototype);
}

// Nunjucks' lexer's whitespace inside tags (its `whitespaceChars`); any other character would be part of a name.
const WS = "[ \\n\\t\\r\\u00a0]";
const NAME = "([A-Za-z_][A-Za-z0-9_]*)";
/** After `{{`: a name and `}}`. No `-` (whitespace control) anywhere: that is Nunjucks' job. */
const VARIABLE = new RegExp(`${WS}*${NAME}${WS}*\\}\\}`, "y");
/** After `{%`: `if name`, `else` or `endif`, and `%}`. */
const BLOCK = new RegExp(`${WS}*(?:(if)${WS}+${NAME}|(else)|(endif))${WS}*%\\}`, "y");
/** Where a tag starts in text: the lexer takes the first `{` followed by `{` or `%`. */
const TAG_START = /\{[{%]/g;

interface OpenIf {
  node: IfPiece;
  inElse: boolean;
  /** The list the `if` itself sits in. */
  parent: Piece[];
}

/**
 * Parses `text` when it is inside the subset; `undefined` otherwise (including every template Nunjucks would reject,
 * so syntax errors keep Nunjucks' messages).
 *
 * Whitespace follows Nunjucks' lexer exactly: `lstripBlocks` drops the spaces and tabs between the start of a line
 * and a `{%` when they all belong to the text since the previous tag; `trimBlocks` drops one `\n` or `\r\n` right
 * after a `%}`. Variable tags trim nothing.
 */
export function parseSimpleTemplate(text: string): SimpleTemplate | undefined {
  // `{#` opens a comment and a stray `#}` is an error in Nunjucks' lexer, wherever they are.
  if (text.includes("{#") || text.includes("#}")) return undefined;
  const root: Piece[] = [];
  let out = root;
  const open: OpenIf[] = [];
  let pos = 0;
  TAG_START.lastIndex = 0;
  for (let match = TAG_START.exec(text); match; match = TAG_START.exec(text)) {
    const start = match.index;
    const block = text[start + 1] === "%";
    let dataEnd = start;
    if (block) {
      // lstripBlocks: the line's start must lie inside this stretch of text (Nunjucks' `colno <= tok.length`) and
      // the line up to the tag be non-empty whitespace (its `/^\s+$/`).
      const lineStart = text.lastIndexOf("\n", start - 1) + 1;
      if (lineStart >= pos && lineStart < start && /^\s+$/.test(text.slice(lineStart, start))) dataEnd = lineStart;
    }
    if (dataEnd > pos) out.push(text.slice(pos, dataEnd));
    const pattern = block ? BLOCK : VARIABLE;
    pattern.lastIndex = start + 2;
    const tag = pattern.exec(text);
    if (!tag) return undefined;
    pos = pattern.lastIndex;
    if (!block) {
      const name = tag[1] ?? "";
      if (!plainName(name)) return undefined;
      out.push({ name });
    } else {
      if (tag[1]) {
        const cond = tag[2] ?? "";
        if (!plainName(cond)) return undefined;
        const node: IfPiece = { cond, ifTrue: [], ifFalse: [] };
        out.push(node);
        open.push({ node, inElse: false, parent: out });
        out = node.ifTrue;
      } else if (tag[3]) {
        const current = open.at(-1);
        if (!current || current.inElse) return undefined;
        current.inElse = true;
        out = current.node.ifFalse;
      } else {
        const current = open.pop();
        if (!current) return undefined;
        out = current.parent;
      }
      // trimBlocks
      if (text[pos] === "\n") pos += 1;
      else if (text[pos] === "\r" && text[pos + 1] === "\n") pos += 2;
    }
    TAG_START.lastIndex = pos;
  }
  if (open.length > 0) return undefined;
  if (pos < text.length) out.push(text.slice(pos));
  return { pieces: root };
}

/**
 * Renders a parsed template (untrimmed, as Nunjucks' `render` returns it), or `undefined` when a printed value is
 * not a string, number, boolean, null or undefined: Nunjucks prints other values through JavaScript's own
 * conversions (`toString`, which objects may define), which this renderer does not try to follow. Conditions use
 * JavaScript truthiness, as Nunjucks' compiled `if` does (an empty array is true).
 */
export function renderSimpleTemplate(template: SimpleTemplate, args: Record<string, unknown>): string | undefined {
  const parts: string[] = [];
  return renderPieces(template.pieces, args, parts) ? parts.join("") : undefined;
}

function lookup(args: Record<string, unknown>, name: string): unknown {
  // Nunjucks copies the arguments' own enumerable properties into its context and reads from that copy.
  return Object.hasOwn(args, name) && Object.prototype.propertyIsEnumerable.call(args, name) ? args[name] : undefined;
}

function renderPieces(pieces: readonly Piece[], args: Record<string, unknown>, parts: string[]): boolean {
  for (const piece of pieces) {
    if (typeof piece === "string") {
      parts.push(piece);
    } else if ("name" in piece) {
      const value = lookup(args, piece.name);
      if (value === undefined || value === null) continue;
      if (typeof value === "string") parts.push(value);
      else if (typeof value === "number" || typeof value === "boolean") parts.push(String(value));
      else return false;
    } else if (!renderPieces(lookup(args, piece.cond) ? piece.ifTrue : piece.ifFalse, args, parts)) {
      return false;
    }
  }
  return true;
}
