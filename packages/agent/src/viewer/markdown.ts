/**
 * Model text as Markdown, rendered safely: raw HTML in the text is shown as text (markdown-it's `html: false`),
 * and only http(s), mailto and relative links become links (anything else — `javascript:`, `vbscript:`, `data:` —
 * stays plain text). Links open in a new tab without access to the viewer (`rel=noopener noreferrer`).
 * A Markdown image is never loaded: it shows as a link naming its URL. Opening a session must not fetch anything the
 * model pointed at (a URL can carry data out at view time); the page's Content-Security-Policy (server.ts) refuses
 * external images as well.
 */
import MarkdownIt from "markdown-it";
import { escapeHtml, SafeHtml } from "./html.js";

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });

const ALLOWED_LINK = /^(https?:|mailto:|#|\/(?!\/)|\.{0,2}\/|[^:]*$)/i;
md.validateLink = (url: string) => ALLOWED_LINK.test(url.trim());

md.renderer.rules.link_open = (tokens, idx, options, _env, self) => {
  const token = tokens[idx];
  if (token) {
    token.attrSet("rel", "noopener noreferrer nofollow");
    token.attrSet("target", "_blank");
  }
  return self.renderToken(tokens, idx, options);
};

md.renderer.rules.image = (tokens, idx, options, env, self) => {
  const token = tokens[idx];
  if (!token) return "";
  const src = String(token.attrGet("src") ?? "");
  const alt = self.renderInlineAsText(token.children ?? [], options, env);
  const label = alt ? `${alt}: ${src}` : src;
  return `<a class="image-link" href="${escapeHtml(src)}" rel="noopener noreferrer nofollow" target="_blank">[image] ${escapeHtml(label)}</a>`;
};

/** Markdown source → safe HTML. */
export function markdown(text: string): SafeHtml {
  return new SafeHtml(md.render(text));
}
