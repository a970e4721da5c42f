import { parseHTML } from "linkedom";
import { extractLargePage, LARGE_PAGE_ELEMENTS, type LargePageNode } from "./large-page.js";
import { domToMarkdown, type MdNode } from "./markdown.js";
import { extractArticle, prune, type ReadableElement } from "./readability.js";

/**
 * The few DOM members this module and the ones it hands elements to (large-page.ts, markdown.ts, readability.ts)
 * use; linkedom implements them (Node has no DOM types here).
 */
interface DomNode extends LargePageNode, MdNode {
  readonly firstChild: DomNode | null;
  readonly nextSibling: DomNode | null;
}
interface DomElement extends DomNode, ReadableElement {
  readonly localName: string;
  readonly className: string;
  readonly firstElementChild: DomElement | null;
  readonly nextElementSibling: DomElement | null;
  readonly parentElement: DomElement | null;
  getAttribute(name: string): string | null;
  setAttribute(name: string, value: string): void;
  remove(): void;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
  getElementsByTagName?(name: string): ArrayLike<DomElement>;
}
interface DomDocument {
  readonly title: string;
  readonly documentElement: DomElement | null;
  readonly body: DomElement | null;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): Iterable<DomElement>;
  getElementsByTagName(name: string): Iterable<DomElement>;
}

/** What {@link htmlToMarkdown} extracted from a page. */
export interface ConvertedPage {
  /** The page title (Readability's pick, else `<title>`), or "" when the page has none. */
  title: string;
  /** The article as Markdown, starting with `# title` when there is a title. */
  markdown: string;
  /** True when Readability found an article; false when the whole body was converted instead. */
  readable: boolean;
}

/** Chrome removed before the whole-body fallback (Readability does its own, better job when it succeeds). */
const CHROME = "script, style, noscript, template, nav, header, footer, aside, form, iframe, svg, [role=navigation]";

/**
 * Converts an HTML page to Markdown: linkedom parses it, Mozilla Readability extracts the article (see
 * readability.ts), markdown.ts writes Markdown (GFM tables, fenced code with its language) with link and image URLs
 * made absolute against `pageUrl` (or the page's `<base href>`). When Readability finds no article (index pages, tiny pages), the
 * body minus scripts and navigation is converted instead, so the caller always gets something readable.
 */
export function htmlToMarkdown(
  html: string,
  pageUrl: string,
  options: { largePageElements?: number } = {},
): ConvertedPage {
  const lean = stripInert(html);
  const { document, base } = prepare(lean, pageUrl);
  const fallbackTitle = cleanText(document.title);

  const elements = document.documentElement ? prune(document.documentElement) : 0;
  if (elements > (options.largePageElements ?? LARGE_PAGE_ELEMENTS) && document.body) {
    const article = extractLargePage(document.body);
    const title = articleTitle(fallbackTitle, article.heading);
    const body = domToMarkdown(article.root as MdNode, { base, demoteH1: title !== "" });
    if (body.length >= MIN_ARTICLE_CHARS) return { title, markdown: withTitle(title, body), readable: true };
    // Too little prose for an article (a huge index page): the whole body minus chrome follows below.
    return { title: fallbackTitle, markdown: withTitle(fallbackTitle, bodyFallback(lean, pageUrl)), readable: false };
  }

  // Readability mutates the document, so the fallback parses again (only on that rare path).
  const article = extractArticle<DomElement>(document);
  const content = article?.content;
  // Below Readability's own threshold its answer is a last resort that often keeps the navigation; the body minus
  // chrome is better then, unless that comes out empty.
  const fallback =
    article && cleanText(article.textContent ?? "").length < MIN_ARTICLE_CHARS ? bodyFallback(lean, pageUrl) : "";
  if (article && content && cleanText(article.textContent ?? "") !== "" && fallback === "") {
    const title = cleanText(article.title ?? "") || fallbackTitle;
    const body = domToMarkdown(content, { base });
    return { title, markdown: withTitle(title, body, article.byline, article.publishedTime), readable: true };
  }

  const body = fallback || bodyFallback(lean, pageUrl);
  return { title: fallbackTitle, markdown: withTitle(fallbackTitle, body), readable: false };
}

/**
 * The title of a page extracted without Readability: the article's first `<h1>` when the `<title>` contains it
 * (titles usually add the site name: "Heading | Site"), else the `<title>`.
 */
function articleTitle(documentTitle: string, heading: string): string {
  const h1 = cleanText(heading);
  return h1 !== "" && (documentTitle === "" || documentTitle.includes(h1)) ? h1 : documentTitle;
}

/** Readability's default `charThreshold`: shorter extractions are its fallback attempts. */
const MIN_ARTICLE_CHARS = 500;

/** The Markdown of the page body without scripts, navigation, header, footer, asides and forms. */
function bodyFallback(html: string, pageUrl: string): string {
  const { document, base } = prepare(html, pageUrl);
  for (const element of [...document.querySelectorAll(CHROME)]) element.remove();
  return document.body ? domToMarkdown(document.body, { base }) : "";
}

/** The parsed page and the base its relative URLs resolve against (`<base href>` or the page URL). */
function prepare(html: string, pageUrl: string): { document: DomDocument; base: string } {
  // linkedom's types are the DOM's (a Window), which this package (no DOM lib) lacks; its document implements the
  // members of DomDocument this module declares above.
  const { document } = parseHTML(html) as { document: DomDocument };
  keepCodeLanguages(document);
  return { document, base: resolveBase(document, pageUrl) };
}

/**
 * Removes what never reaches the Markdown before parsing — comments, scripts (except JSON-LD, which Readability
 * reads for title, author and date), styles and inline SVG — because on real pages they are often most of the bytes
 * and parsing them dominates the conversion time. One left-to-right pass, so a "<!--" inside a script is not
 * mistaken for a comment and vice versa.
 */
export function stripInert(html: string): string {
  return html.replace(
    /<!--[\s\S]*?(?:-->|$)|<script\b([^>]*)>[\s\S]*?(?:<\/script\s*>|$)|<style\b[^>]*>[\s\S]*?(?:<\/style\s*>|$)|<svg\b[^>]*>[\s\S]*?(?:<\/svg\s*>|$)/gi,
    (match, scriptAttributes: string | undefined) =>
      scriptAttributes !== undefined && /application\/ld\+json/i.test(scriptAttributes) ? match : "",
  );
}

function resolveBase(document: DomDocument, pageUrl: string): string {
  const href = document.querySelector("base[href]")?.getAttribute("href");
  if (!href) return pageUrl;
  try {
    return new URL(href, pageUrl).href;
  } catch {
    return pageUrl;
  }
}

/**
 * The Markdown serializer reads the fence language from `class="language-x"` on `<code>` or `<pre>`; many sites
 * name it on a wrapper instead (`highlight-x`), which Readability may drop, so copy it onto the code first.
 */
function keepCodeLanguages(document: DomDocument): void {
  for (const pre of document.getElementsByTagName("pre")) {
    const code = pre.querySelector("code");
    const codeClass = code?.getAttribute("class") ?? "";
    if (/language-\S/.test(codeClass)) continue;
    // Sphinx and similar generators put "highlight-python" on a wrapper two levels up.
    const classes = [pre, pre.parentElement, pre.parentElement?.parentElement]
      .map((element) => element?.getAttribute("class") ?? "")
      .join(" ");
    const fromClass = /(?:^|\s)(?:language|lang|highlight|brush:?)-?([\w+#]+(?:-[\w+#]+)*)/.exec(classes)?.[1];
    const fromData = pre.getAttribute("data-lang") ?? pre.getAttribute("data-language");
    const language = fromData ?? (fromClass === "source" ? undefined : fromClass);
    if (code && language) code.setAttribute("class", `${codeClass} language-${language}`.trim());
  }
}

function withTitle(title: string, body: string, byline?: string | null, published?: string | null): string {
  const parts: string[] = [];
  // Readability usually removes the page's own <h1> title from the content, or demotes it to <h2>; either way the
  // Markdown starts with the title as its one top-level heading.
  const firstLine = body.split("\n", 1)[0] ?? "";
  const rest =
    firstLine.startsWith("#") && title && cleanText(firstLine.replace(/^#+\s*/, "")) === title
      ? body.slice(firstLine.length).trimStart()
      : body;
  if (title) parts.push(`# ${title}`);
  const meta = [cleanText(byline ?? ""), cleanText(published ?? "")].filter((s) => s !== "");
  if (meta.length > 0) parts.push(`*${meta.join(" · ")}*`);
  if (rest) parts.push(rest);
  return parts.join("\n\n");
}

function cleanText(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
