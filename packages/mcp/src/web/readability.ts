import { Readability } from "@mozilla/readability";

/**
 * Mozilla Readability on a linkedom document, made several times faster on large pages by:
 *  - pruning, before Readability runs, elements it would drop from the article anyway (asides, footers, forms'
 *    controls, iframes, embeds) plus navigation and hidden elements, so it scores and cleans a smaller DOM;
 *  - replacing two of its internal helpers with equivalents that suit linkedom: the tag search it calls dozens
 *    of times (`_getAllNodesWithTag`, a CSS selector query in linkedom that compiles and matches the selector on
 *    every element), and the visibility test it runs on every node (`_isProbablyVisible`, which makes linkedom
 *    parse the inline style of each element).
 * The helpers are replaced only when Readability still has methods of those names, so a future version that
 * renames them falls back to its own code: slower, never wrong.
 */

/** The few DOM members this module uses; linkedom implements them. */
export interface ReadableElement {
  readonly localName: string;
  readonly className: string;
  readonly firstElementChild: ReadableElement | null;
  readonly nextElementSibling: ReadableElement | null;
  readonly parentElement: ReadableElement | null;
  getAttribute(name: string): string | null;
  hasAttribute(name: string): boolean;
  remove(): void;
  getElementsByTagName?(name: string): ArrayLike<ReadableElement>;
}

/** What Readability returns when its serializer hands back the article element itself. */
export interface Article<T> {
  title: string | null | undefined;
  content: T | null | undefined;
  textContent: string | null | undefined;
  byline: string | null | undefined;
  publishedTime: string | null | undefined;
}

/**
 * Chrome removed before Readability: what its `_prepArticle` would strip from the article anyway (footer, aside,
 * iframe, embed, object, form controls), navigation, and dialogs.
 */
const PRUNED = new Set([
  "nav",
  "aside",
  "footer",
  "iframe",
  "embed",
  "object",
  "input",
  "textarea",
  "select",
  "button",
  "dialog",
  "template",
  "link",
]);

/** Roles of elements Readability itself removes as unlikely to be content. */
const PRUNED_ROLES = new Set(["navigation", "menu", "menubar", "complementary", "alert", "alertdialog", "dialog"]);

/**
 * Runs Readability on `document` (which it mutates; {@link prune} it first) and returns the article element, or
 * null when it found none.
 */
export function extractArticle<T extends ReadableElement>(document: unknown): Article<T> | null {
  // Readability's types name the DOM's Document and Node, which this package (no DOM lib) lacks: any to the
  // compiler. The document is linkedom's, and the serializer hands back the article element itself, a T.
  const reader = new Readability<T>(document, {
    // Classes are kept so `language-*` on code blocks reaches the Markdown (and cleaning them is a full pass).
    keepClasses: true,
    serializer: (node): T => node,
  });
  speedUp(reader);
  return reader.parse() as Article<T> | null;
}

/** Removes chrome and hidden elements (see {@link PRUNED}) below `root`; returns how many elements remain. */
export function prune(root: ReadableElement): number {
  const doomed: ReadableElement[] = [];
  let kept = 0;
  let node = root.firstElementChild;
  while (node) {
    if (isChrome(node) || !isProbablyVisible(node)) {
      doomed.push(node);
    } else {
      kept++;
      if (node.firstElementChild) {
        node = node.firstElementChild;
        continue;
      }
    }
    node = nextOutside(node, root);
  }
  for (const element of doomed) element.remove();
  return kept;
}

function isChrome(node: ReadableElement): boolean {
  if (PRUNED.has(node.localName)) return true;
  const role = node.getAttribute("role");
  return role !== null && PRUNED_ROLES.has(role);
}

/** The next element after `node`'s subtree in document order, staying inside `root`. */
function nextOutside(start: ReadableElement, root: ReadableElement): ReadableElement | null {
  let node: ReadableElement | null = start;
  while (node && node !== root) {
    const next: ReadableElement | null = node.nextElementSibling;
    if (next) return next;
    node = node.parentElement;
  }
  return null;
}

/** The descendants of `root` (not `root` itself) with one of `tags`, in document order, like querySelectorAll. */
export function elementsByTag(root: ReadableElement, tags: readonly string[]): ReadableElement[] {
  const all = tags.includes("*");
  const wanted = new Set(tags.map((tag) => tag.toLowerCase()));
  const found: ReadableElement[] = [];
  let node = root.firstElementChild;
  while (node) {
    if (all || wanted.has(node.localName)) found.push(node);
    node = node.firstElementChild ?? nextOutside(node, root);
  }
  return found;
}

/** Readability's visibility test, reading the style attribute as text instead of through a parsed style object. */
function isProbablyVisible(node: ReadableElement): boolean {
  const style = node.getAttribute("style");
  if (style && /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\b/i.test(style)) return false;
  if (node.hasAttribute("hidden")) return false;
  // Wikimedia marks math fallback images aria-hidden; Readability keeps them, and so does this.
  return node.getAttribute("aria-hidden") !== "true" || (node.className ?? "").includes("fallback-image");
}

function speedUp(reader: object): void {
  const internals = reader as Record<string, unknown>;
  if (typeof internals._getAllNodesWithTag === "function") {
    internals._getAllNodesWithTag = (node: ReadableElement, tags: string[]) =>
      // linkedom's getElementsByTagName is a plain walk of its node list, cheaper than following element links.
      tags.length === 1 && tags[0] !== "*" && node.getElementsByTagName
        ? node.getElementsByTagName(tags[0] ?? "")
        : elementsByTag(node, tags);
  }
  if (typeof internals._isProbablyVisible === "function") internals._isProbablyVisible = isProbablyVisible;
}
