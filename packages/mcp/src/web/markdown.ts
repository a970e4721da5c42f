/**
 * A small DOM → Markdown serializer for the article Readability extracts. It walks the DOM once and writes GFM:
 * headings, paragraphs, emphasis, links, images, nested lists, blockquotes, fenced code with its language, inline
 * code, tables, rules and line breaks. Walking the parsed DOM directly replaces serializing it back to HTML and
 * parsing that again in a generic converter, which was a third of the conversion time on large pages.
 *
 * Only the DOM members listed in {@link MdNode} are used, so any DOM with `firstChild`/`nextSibling` works
 * (linkedom here, whose `childNodes` builds a fresh list on every access). Escaping and inline assembly are in
 * markdown-text.ts.
 */
import {
  collapse,
  escapeLineStart,
  escapeText,
  Inline,
  inlineCode,
  prefixLines,
  splitSpace,
  wrap,
} from "./markdown-text.js";

/** The DOM members the serializer reads. */
export interface MdNode {
  readonly nodeType: number;
  readonly nodeName: string;
  readonly firstChild: MdNode | null;
  readonly nextSibling: MdNode | null;
  readonly textContent: string | null;
  getAttribute?(name: string): string | null;
}

const ELEMENT = 1;
const TEXT = 3;
const CDATA = 4;

/** Elements that start a new block; everything else is inline content. */
const BLOCK = new Set([
  "ADDRESS",
  "ARTICLE",
  "ASIDE",
  "BLOCKQUOTE",
  "BODY",
  "CENTER",
  "DD",
  "DETAILS",
  "DIALOG",
  "DIR",
  "DIV",
  "DL",
  "DT",
  "FIELDSET",
  "FIGCAPTION",
  "FIGURE",
  "FOOTER",
  "FORM",
  "H1",
  "H2",
  "H3",
  "H4",
  "H5",
  "H6",
  "HEADER",
  "HGROUP",
  "HR",
  "HTML",
  "LI",
  "MAIN",
  "MENU",
  "NAV",
  "OL",
  "P",
  "PRE",
  "SECTION",
  "SUMMARY",
  "TABLE",
  "UL",
]);

/** Elements whose content never reaches the Markdown. */
const SKIP = new Set([
  "SCRIPT",
  "STYLE",
  "NOSCRIPT",
  "TEMPLATE",
  "HEAD",
  "TITLE",
  "META",
  "LINK",
  "BASE",
  "SVG",
  "MATH",
  "CANVAS",
  "IFRAME",
  "OBJECT",
  "EMBED",
  "INPUT",
  "SELECT",
  "TEXTAREA",
  "BUTTON",
  "SOURCE",
  "TRACK",
  "WBR",
  "AREA",
  "MAP",
  "PARAM",
  "AUDIO",
  "VIDEO",
]);

/** Where image and link URLs are resolved; `base` is an absolute URL (relative URLs are kept when it is ""). */
export interface MdOptions {
  base?: string;
  /** Write `<h1>` as `##`, when the caller puts the page title on top as the one `#` heading. */
  demoteH1?: boolean;
}

/** Serializes the content of `root` (not `root`'s own tag) as Markdown blocks separated by blank lines. */
export function domToMarkdown(root: MdNode, options: MdOptions = {}): string {
  const writer = new Writer(options.base ?? "", options.demoteH1 ?? false);
  return writer.blocks(root).trim();
}

class Writer {
  /** Inside a table cell, code is plain text: backticks around every identifier make narrow tables unreadable. */
  private inCell = false;

  constructor(
    private readonly base: string,
    private readonly demoteH1: boolean,
  ) {}

  /** The children of a block container as Markdown blocks; a nested list follows its text on the next line. */
  blocks(parent: MdNode): string {
    const out: string[] = [];
    let inline = new Inline();
    const flush = () => {
      const text = inline.text().trim();
      if (text !== "") out.push(escapeLineStart(text));
      inline = new Inline();
    };
    for (let child = parent.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === ELEMENT && BLOCK.has(child.nodeName)) {
        flush();
        const block = this.block(child);
        if (block !== "") out.push(block);
      } else {
        inline.add(this.inline(child));
      }
    }
    flush();
    let result = "";
    for (let i = 0; i < out.length; i++) {
      const block = out[i] ?? "";
      if (i > 0) result += parent.nodeName === "LI" && /^(?:[-*+]|\d+\.) /.test(block) ? "\n" : "\n\n";
      result += block;
    }
    return result;
  }

  private block(node: MdNode): string {
    const name = node.nodeName;
    switch (name) {
      case "H1":
      case "H2":
      case "H3":
      case "H4":
      case "H5":
      case "H6": {
        const text = this.inlineContent(node).trim().replace(/\n+/g, " ");
        const level = name === "H1" && this.demoteH1 ? 2 : Number(name[1]);
        return text === "" ? "" : `${"#".repeat(level)} ${text}`;
      }
      case "P":
      case "DT":
      case "SUMMARY":
      case "FIGCAPTION":
        return this.blocks(node);
      case "HR":
        return "---";
      case "PRE":
        return this.pre(node);
      case "UL":
      case "OL":
      case "MENU":
      case "DIR":
        return this.list(node);
      case "LI":
        // A stray <li> outside a list still reads as an item.
        return prefixLines(this.blocks(node), "- ", "  ");
      case "BLOCKQUOTE": {
        const inner = this.blocks(node);
        return inner === "" ? "" : prefixLines(inner, "> ", "> ").replace(/^> $/gm, ">");
      }
      case "TABLE":
        return this.table(node);
      case "DD":
        return prefixLines(this.blocks(node), ": ", "  ");
      default:
        return this.blocks(node);
    }
  }

  /** Markdown of an inline node; whitespace is collapsed, blocks met inside inline elements are flattened. */
  private inline(node: MdNode): string {
    if (node.nodeType === TEXT || node.nodeType === CDATA) return escapeText(collapse(node.textContent ?? ""));
    if (node.nodeType !== ELEMENT) return "";
    const name = node.nodeName;
    if (SKIP.has(name)) return "";
    switch (name) {
      case "BR":
        return "  \n";
      case "IMG":
        return this.image(node);
      case "A":
        return this.link(node);
      case "CODE":
      case "KBD":
      case "SAMP":
      case "TT":
        return this.inCell ? escapeText(collapse(node.textContent ?? "")) : inlineCode(node.textContent ?? "");
      case "STRONG":
      case "B":
        return wrap(this.inlineContent(node), "**");
      case "EM":
      case "I":
      case "CITE":
      case "DFN":
        return wrap(this.inlineContent(node), "_");
      case "DEL":
      case "S":
      case "STRIKE":
        return wrap(this.inlineContent(node), "~~");
      default:
        return BLOCK.has(name) ? ` ${this.inlineContent(node)} ` : this.inlineContent(node);
    }
  }

  private inlineContent(node: MdNode): string {
    const text = new Inline();
    for (let child = node.firstChild; child; child = child.nextSibling) text.add(this.inline(child));
    return text.text();
  }

  private link(node: MdNode): string {
    const text = this.inlineContent(node);
    const href = (node.getAttribute?.("href") ?? "").trim();
    if (href === "" || /^javascript:/i.test(href) || text.trim() === "") return text;
    const [lead, core, trail] = splitSpace(text);
    return `${lead}[${core.replace(/\s*\n\s*/g, " ")}](${this.url(href)})${trail}`;
  }

  private image(node: MdNode): string {
    const source = imageSource(node);
    if (source === "") return "";
    const alt = collapse(node.getAttribute?.("alt") ?? "").trim();
    return `![${escapeText(alt)}](${this.url(source)})`;
  }

  /** An absolute URL usable inside `(...)`: spaces and parentheses percent-encoded. */
  private url(value: string): string {
    let url = value;
    if (this.base !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith("#")) {
      try {
        url = new URL(url, this.base).href;
      } catch {
        // Not a URL even relative to the base: keep it as the page wrote it.
      }
    }
    return url.replace(/[\s()]/g, (c) => (c === "(" ? "%28" : c === ")" ? "%29" : "%20"));
  }

  private pre(node: MdNode): string {
    let code = node.textContent ?? "";
    code = code.replace(/^\n/, "").replace(/\s+$/, "");
    if (code === "") return "";
    const language = codeLanguage(node);
    let fence = "```";
    while (code.includes(fence)) fence += "`";
    return `${fence}${language}\n${code}\n${fence}`;
  }

  private list(node: MdNode): string {
    const ordered = node.nodeName === "OL";
    let number = ordered ? Number.parseInt(node.getAttribute?.("start") ?? "1", 10) : 0;
    if (!Number.isFinite(number)) number = 1;
    const items: string[] = [];
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === ELEMENT && child.nodeName === "LI") {
        const marker = ordered ? `${number++}. ` : "- ";
        const content = this.blocks(child);
        items.push(prefixLines(content, marker, " ".repeat(marker.length)));
      } else if (child.nodeType === ELEMENT && BLOCK.has(child.nodeName)) {
        // A nested list written directly inside the outer list (invalid but common) belongs to the previous item.
        const block = this.block(child);
        if (block !== "") items.push(prefixLines(block, "  ", "  "));
      } else {
        const text = this.inline(child).trim();
        if (text !== "") items.push(`- ${text}`);
      }
    }
    return items.join("\n");
  }

  private table(node: MdNode): string {
    const rows: MdNode[] = [];
    collectRows(node, rows);
    this.inCell = true;
    const cells = rows.map((row) => {
      const out: string[] = [];
      for (let cell = row.firstChild; cell; cell = cell.nextSibling) {
        if (cell.nodeType !== ELEMENT || (cell.nodeName !== "TD" && cell.nodeName !== "TH")) continue;
        const text = collapse(this.inlineContent(cell)).trim().replace(/\|/g, "\\|");
        out.push(text);
        const span = Number.parseInt(cell.getAttribute?.("colspan") ?? "1", 10);
        for (let i = 1; i < Math.min(span, 50); i++) out.push("");
      }
      return out;
    });
    this.inCell = false;
    const filled = cells.filter((row) => row.some((cell) => cell !== ""));
    const columns = Math.max(0, ...filled.map((row) => row.length));
    if (filled.length === 0 || columns === 0) return "";
    // A one-column table is layout, not data: its cells read better as paragraphs.
    if (columns === 1) return filled.map((row) => row[0]).join("\n\n");
    const widths = Array.from({ length: columns }, (_, c) =>
      Math.max(3, ...filled.map((row) => Math.min(row[c]?.length ?? 0, MAX_PADDED_WIDTH))),
    );
    const line = (row: string[]) => `| ${widths.map((width, c) => (row[c] ?? "").padEnd(width)).join(" | ")} |`;
    const [head = [], ...body] = filled;
    return [line(head), `| ${widths.map((w) => "-".repeat(w)).join(" | ")} |`, ...body.map(line)].join("\n");
  }
}

/** Cells longer than this are not padded to, so one long cell does not widen every row. */
const MAX_PADDED_WIDTH = 60;

/** The rows of a table in order, without descending into nested tables. */
function collectRows(node: MdNode, rows: MdNode[]): void {
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType !== ELEMENT) continue;
    if (child.nodeName === "TR") rows.push(child);
    else if (child.nodeName === "THEAD" || child.nodeName === "TBODY" || child.nodeName === "TFOOT") {
      collectRows(child, rows);
    }
  }
}

/** Lazy-loading attributes name the real image; `src` is often a placeholder then. */
const LAZY_SOURCES = ["data-src", "data-original", "data-lazy-src", "data-url"];

function imageSource(node: MdNode): string {
  for (const name of LAZY_SOURCES) {
    const value = node.getAttribute?.(name)?.trim();
    if (value) return value;
  }
  const src = node.getAttribute?.("src")?.trim() ?? "";
  if (src !== "" && !/^data:/i.test(src)) return src;
  const srcset = node.getAttribute?.("srcset") ?? node.getAttribute?.("data-srcset") ?? "";
  const first = srcset.trim().split(/\s+/, 1)[0]?.replace(/,$/, "") ?? "";
  return /^data:/i.test(first) ? "" : first;
}

/** The fence language: `language-x`/`lang-x` on `<code>` or `<pre>`, or `data-lang` on `<pre>`. */
function codeLanguage(pre: MdNode): string {
  const data = pre.getAttribute?.("data-lang") ?? pre.getAttribute?.("data-language");
  if (data) return data.trim().split(/\s+/)[0] ?? "";
  const classes = [pre.getAttribute?.("class") ?? ""];
  for (let child = pre.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === ELEMENT && child.nodeName === "CODE") classes.unshift(child.getAttribute?.("class") ?? "");
  }
  for (const value of classes) {
    const match = /(?:^|\s)(?:language|lang)-([\w+#.-]+)/.exec(value);
    if (match?.[1]) return match[1];
  }
  return "";
}
