/**
 * The text side of the DOM → Markdown serializer (markdown.ts): inline pieces joined without doubled spaces, emphasis
 * and code markers that hug the text, and the escaping that keeps page text from turning into Markdown syntax.
 */

export function collapse(text: string): string {
  return text.replace(/[ \t\n\r\f]+/g, " ");
}

/**
 * Inline Markdown being assembled from pieces, without doubling the space between them (text nodes keep one
 * collapsed space at each end; a hard break swallows the space that follows it). The pieces are joined once at the
 * end: testing the end of a growing concatenated string would flatten it on every append, which is quadratic.
 */
export class Inline {
  private readonly parts: string[] = [];
  private last = "";

  add(piece: string): void {
    let text = piece;
    if (this.last === "\n") text = text.replace(/^ +/, "");
    else if (this.last === " " && text.startsWith(" ")) text = text.slice(1);
    if (text === "") return;
    this.parts.push(text);
    this.last = text[text.length - 1] ?? "";
  }

  text(): string {
    return this.parts.join("");
  }
}

/** Splits leading and trailing whitespace off, so markers hug the text: " a " → [" ", "a", " "]. */
export function splitSpace(text: string): [string, string, string] {
  const core = text.trim();
  if (core === "") return [text, "", ""];
  const start = text.indexOf(core);
  return [text.slice(0, start), core, text.slice(start + core.length)];
}

export function wrap(text: string, marker: string): string {
  const [lead, core, trail] = splitSpace(text);
  return core === "" ? text : `${lead}${marker}${core}${marker}${trail}`;
}

export function inlineCode(raw: string): string {
  const text = collapse(raw);
  if (text.trim() === "") return text;
  const [lead, core, trail] = splitSpace(text);
  let ticks = "`";
  while (core.includes(ticks)) ticks += "`";
  const pad = core.startsWith("`") || core.endsWith("`") ? " " : "";
  return `${lead}${ticks}${pad}${core}${pad}${ticks}${trail}`;
}

/**
 * Escapes what would otherwise turn into Markdown syntax inside text: `\`, `` ` ``, `*`, `[`, `]`, `~~`, and `_`
 * where it could delimit emphasis (an underscore inside a word, as in snake_case, cannot).
 */
export function escapeText(text: string): string {
  return text.replace(/[\\`*[\]]|~~|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])/g, "\\$&");
}

/** Escapes a "#", ">", "-", "+" or "1." that would start a heading, quote or list at the start of a paragraph. */
export function escapeLineStart(text: string): string {
  return text.replace(/^(?:#{1,6}(?=\s|$)|[>+-](?=\s))/, "\\$&").replace(/^(\d+)(\.\s)/, "$1\\$2");
}

/** Prefixes the first line with `first` and the others with `rest` (empty lines stay empty). */
export function prefixLines(text: string, first: string, rest: string): string {
  if (text === "") return first.trimEnd();
  const restTrimmed = rest.trimEnd();
  return text
    .split("\n")
    .map((line, i) => (i === 0 ? first + line : line === "" ? restTrimmed : rest + line))
    .join("\n");
}
