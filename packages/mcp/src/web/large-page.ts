/**
 * Article extraction for very large pages, in a few linear passes. Readability costs about 20 µs per element on
 * linkedom (it measures text and link density of the same subtrees again and again), so a page with tens of
 * thousands of elements — a long wiki article, a book chapter, a full changelog — took a second or more. Above
 * {@link LARGE_PAGE_ELEMENTS} elements this extractor is used instead. It keeps what matters on such pages: it
 * removes boilerplate by class and id, finds the element that holds most of the page's prose, and drops link
 * lists and link-heavy boxes (navigation boxes, "related" blocks) inside it.
 */

/** Pages with more elements than this (after chrome is pruned) are extracted here instead of by Readability. */
export const LARGE_PAGE_ELEMENTS = 8000;

/** The DOM members used; linkedom implements them. */
export interface LargePageNode {
  readonly nodeType: number;
  readonly localName?: string;
  readonly className?: string;
  readonly id?: string;
  readonly firstChild: LargePageNode | null;
  readonly nextSibling: LargePageNode | null;
  readonly textContent: string | null;
  getAttribute?(name: string): string | null;
  remove?(): void;
}

const ELEMENT = 1;
const TEXT = 3;

/** Class or id words of page furniture (matched as substrings, like Readability does). */
const BOILERPLATE =
  /\b(?:ad|ads|advert\w*|banner|breadcrumbs?|comments?|cookie\w*|disqus|footer|gdpr|masthead|menu|navbox|navbar|newsletter|pagination|pager|popup|promo|related|share|sharing|sidebar|social|sponsor\w*|subscribe|toolbar|widget)\b|comment-|-ad-|social-/i;
/** Class or id words that mark the content even when a furniture word is present too ("main-sidebar-content"). */
const CONTENT_HINT = /(?:^|[\s_-])(?:article|body|content|entry|main|post|story|text)(?:$|[\s_-])/i;

/** Elements whose own text counts as prose when choosing the article container. */
const PROSE = new Set(["p", "pre", "li", "td", "blockquote", "dd", "h1", "h2", "h3", "h4", "h5", "h6"]);
/** Containers judged by link density. */
const BOXES = new Set(["div", "section", "ul", "ol", "table", "dl", "header"]);

interface Measure {
  /** Characters of text below the element. */
  text: number;
  /** Characters of text inside links below the element. */
  link: number;
  /** Characters of text in prose elements below the element. */
  prose: number;
}

/** What {@link extractLargePage} found. */
export interface LargePageArticle {
  /** The element holding the article, with link-heavy boxes removed. */
  root: LargePageNode;
  /** The text of the first `<h1>` of the page (once boilerplate is gone), or "". */
  heading: string;
}

/**
 * Removes boilerplate below `body` and returns the element holding the article (descending from `body` while one
 * child holds most of the prose), with link-heavy boxes removed from it.
 */
export function extractLargePage(body: LargePageNode): LargePageArticle {
  removeBoilerplate(body);
  // The title heading often sits in a header above the element that holds the prose, so look for it first.
  const heading = firstHeading(body);
  const measures = new Map<LargePageNode, Measure>();
  measure(body, measures, false);
  let root = body;
  for (;;) {
    const total = measures.get(root)?.prose ?? 0;
    let next: LargePageNode | undefined;
    for (let child = root.firstChild; child; child = child.nextSibling) {
      if (child.nodeType !== ELEMENT) continue;
      if ((measures.get(child)?.prose ?? 0) >= total * 0.8) next = child;
    }
    if (!next || total === 0 || PROSE.has(next.localName ?? "")) break;
    root = next;
  }
  removeLinkBoxes(root, measures);
  return { root, heading };
}

function firstHeading(root: LargePageNode): string {
  let heading = "";
  walk(root, (node) => {
    if (heading !== "") return false;
    if (node.localName === "h1") heading = node.textContent ?? "";
    return heading === "";
  });
  return heading;
}

function removeBoilerplate(root: LargePageNode): void {
  const doomed: LargePageNode[] = [];
  walk(root, (node) => {
    const name = node.localName ?? "";
    if (name === "a" || name === "body" || name === "html" || name === "table" || name === "pre") return true;
    const words = `${node.className ?? ""} ${node.id ?? ""}`;
    if (words.length > 1 && BOILERPLATE.test(words) && !CONTENT_HINT.test(words)) {
      doomed.push(node);
      return false;
    }
    return true;
  });
  for (const node of doomed) node.remove?.();
}

/** Calls `visit` on every element below `root` in document order; returning false skips the element's subtree. */
function walk(root: LargePageNode, visit: (node: LargePageNode) => boolean): void {
  for (let child = root.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === ELEMENT && visit(child)) walk(child, visit);
  }
}

function measure(node: LargePageNode, measures: Map<LargePageNode, Measure>, inLink: boolean): Measure {
  const name = node.localName ?? "";
  const result: Measure = { text: 0, link: 0, prose: 0 };
  const link = inLink || name === "a";
  for (let child = node.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === TEXT) {
      const length = (child.textContent ?? "").trim().length;
      result.text += length;
      if (link) result.link += length;
    } else if (child.nodeType === ELEMENT) {
      const inner = measure(child, measures, link);
      result.text += inner.text;
      result.link += inner.link;
      result.prose += inner.prose;
    }
  }
  if (PROSE.has(name)) result.prose = Math.max(result.prose, result.text - result.link);
  measures.set(node, result);
  return result;
}

/**
 * Drops lists and boxes below `root` that are mostly links (navigation boxes, tag clouds, "see also" link farms),
 * keeping those with code or that are short lists of references inside prose.
 */
function removeLinkBoxes(root: LargePageNode, measures: Map<LargePageNode, Measure>): void {
  const doomed: LargePageNode[] = [];
  walk(root, (node) => {
    if (!BOXES.has(node.localName ?? "")) return true;
    const m = measures.get(node);
    if (!m || m.text === 0) return true;
    const density = m.link / m.text;
    if (density > 0.6 && m.text > 80) {
      doomed.push(node);
      return false;
    }
    return true;
  });
  for (const node of doomed) node.remove?.();
}
