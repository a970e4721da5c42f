/**
 * HTML building for the viewer: every interpolated value is escaped unless it is already {@link SafeHtml} (made by
 * this module or by the Markdown renderer, which escapes model text itself). Nothing the model or a tool wrote can
 * reach a page as markup.
 */

/** Markup that is already safe to insert. */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text as HTML text or attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

type Value = SafeHtml | string | number | boolean | null | undefined | readonly Value[];

function render(value: Value): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

/** Tagged template: `html\`<p>${text}</p>\`` escapes `text`; arrays are joined; null, undefined and false vanish. */
export function html(strings: TemplateStringsArray, ...values: Value[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i] as Value) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

/** A URL path segment or query value. */
export const q = encodeURIComponent;

/** The page shell: the stylesheet and the bundled script from /assets, the title and the body. */
export function layout(title: string, body: SafeHtml, options: { data?: Record<string, string> } = {}): string {
  const data = Object.entries(options.data ?? {}).map(([k, v]) => html` data-${k}="${v}"`);
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · crow</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/viewer.css">
<script type="module" src="/assets/viewer.js"></script>
</head>
<body${data}>
<header class="top"><a href="/" class="brand">crow sessions</a> <a href="/evals" class="nav">evals</a></header>
<main>${body}</main>
</body>
</html>
`.value;
}

/** The 404 page: what was not found and where to look instead. */
export function notFoundPage(what: string): string {
  return layout(
    "Not found",
    html`<section class="notfound"><h1>Not found</h1><p>${what}</p><p><a href="/">All sessions</a></p></section>`,
  );
}

/** A compact number: 1234 → "1.2k", 1234567 → "1.2M". */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** A cost with its currency, or an empty string when unknown. */
export function money(amount: number | undefined, currency: string | undefined): string {
  if (amount === undefined || currency === undefined) return "";
  return `${amount < 0.01 && amount > 0 ? amount.toFixed(4) : amount.toFixed(2)} ${currency}`;
}

/** An ISO timestamp as `YYYY-MM-DD HH:MM` (UTC). */
export function when(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}`;
}
