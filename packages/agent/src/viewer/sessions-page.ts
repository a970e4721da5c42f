/**
 * The sessions page: live sessions newest first (keyset pages of 50), filtered by cwd and by text in the title,
 * with their model, prompt version, size, tokens and cost, links to parents and archives, and checkboxes to pick
 * two for the side-by-side comparison.
 */
import type { SessionRecord, Store } from "@crow/core";
import { compact, html, layout, money, q, when } from "./html.js";
import { costOf, type Prices, priceOf } from "./insights.js";

export interface SessionsQuery {
  cwd?: string;
  q?: string;
  cursor?: string;
}

const PAGE = 50;

/**
 * A path that wraps only after a "/" (a `<wbr>` there), never inside a folder's name: each name is a `.seg` the
 * column's CSS keeps on one line (a browser would otherwise break after a "-" in `crow-run-home-x`).
 */
function pathBreaks(dir: string) {
  return dir
    .split("/")
    .map((part, i) => html`${i === 0 ? "" : html`/<wbr>`}${part ? html`<span class="seg">${part}</span>` : ""}`);
}

function row(session: SessionRecord, stats: Awaited<ReturnType<Store["sessionStats"]>>, prices: Prices) {
  const s = stats.get(session.id);
  const price = priceOf(prices, session);
  const cost = s
    ? costOf(price, { promptTokens: s.promptTokens, completionTokens: s.completionTokens, totalTokens: 0 })
    : undefined;
  return html`<tr class="session-row" data-id="${session.id}">
<td><input type="checkbox" name="id" value="${session.id}" aria-label="compare ${session.id}"></td>
<td class="title"><a href="/s/${q(session.id)}">${session.title ?? "(untitled)"}</a><div class="id">${session.id}</div>
${session.parentId ? html`<div class="parent">subagent of <a href="/s/${q(session.parentId)}">${session.parentId}</a></div>` : ""}</td>
<td class="cwd"><a href="/?cwd=${q(session.cwd)}">${pathBreaks(session.cwd)}</a></td>
<td>${session.model ?? ""}</td>
<td>${session.promptId ?? ""}</td>
<td class="num">${s?.messages ?? 0}</td>
<td class="num" title="${s ? `${s.promptTokens} prompt + ${s.completionTokens} completion` : ""}">${compact((s?.promptTokens ?? 0) + (s?.completionTokens ?? 0))}</td>
<td class="num">${money(cost, price?.currency)}</td>
<td class="num">${s?.archives ? html`<a href="/s/${q(session.id)}#compactions">${s.archives}</a>` : "0"}</td>
<td><time>${when(session.updatedAt)}</time></td>
</tr>`;
}

export async function sessionsPage(store: Store, query: SessionsQuery, prices: Prices): Promise<string> {
  const page = await store.listSessions({
    limit: PAGE,
    // A never-prompted session (an editor or `acpx sessions new` opens one at each start) has nothing to show.
    prompted: true,
    ...(query.cwd ? { cwd: query.cwd } : {}),
    ...(query.q ? { titleContains: query.q } : {}),
    ...(query.cursor ? { cursor: query.cursor } : {}),
  });
  const stats = await store.sessionStats(page.sessions.map((s) => s.id));
  const filters = new URLSearchParams();
  if (query.cwd) filters.set("cwd", query.cwd);
  if (query.q) filters.set("q", query.q);
  const nextLink = page.nextCursor
    ? `/?${new URLSearchParams([...filters, ["cursor", page.nextCursor]]).toString()}`
    : undefined;
  const body = html`<h1>Sessions</h1>
<form class="filters" method="get" action="/">
<input type="search" name="q" placeholder="search titles" value="${query.q ?? ""}">
<input type="text" name="cwd" placeholder="working directory" value="${query.cwd ?? ""}">
<button type="submit">Filter</button>${query.cwd || query.q ? html` <a href="/">clear</a>` : ""}
</form>
<form method="get" action="/compare" class="compare-form">
${
  page.sessions.length === 0
    ? html`<p class="empty">No sessions${query.cwd || query.q ? " match" : " yet"} in ${store.location}.</p>`
    : html`<table class="sessions">
<thead><tr><th></th><th>title</th><th>cwd</th><th>model</th><th>prompt</th><th>messages</th><th>tokens</th><th>cost</th><th>archives</th><th>updated</th></tr></thead>
<tbody>${page.sessions.map((s) => row(s, stats, prices))}</tbody></table>
<p><button type="submit" class="compare-button">Compare two selected</button></p>`
}
</form>
${nextLink ? html`<p class="pager"><a class="next-page" href="${nextLink}">Older sessions →</a></p>` : ""}`;
  return layout("Sessions", body, { data: { page: "sessions" } });
}
