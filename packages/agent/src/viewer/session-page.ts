/**
 * The session page: a header with the session's facts, the timeline (first page rendered here, the rest fetched by
 * the page script as it scrolls into view, new messages streamed while the session runs), and beside it the token
 * and cost chart, the system prompt with its version, the compactions (before / after with the summary) and the
 * subagent tree.
 */
import type { SessionRecord, Store } from "@crow/core";
import { counted } from "../base/plural.js";
import type { MarkLoader } from "./checkpoint-marks.js";
import { trialFact, trialOfSession } from "./eval-page.js";
import { compact, html, layout, money, q, type SafeHtml, when } from "./html.js";
import { compactions, costOf, type Prices, priceOf, subagentTree, type TreeNode } from "./insights.js";
import { markdown } from "./markdown.js";
import { timelinePage } from "./timeline.js";

function tree(nodes: readonly TreeNode[]): SafeHtml {
  if (nodes.length === 0) return html``;
  return html`<ul class="tree">${nodes.map(
    (n) =>
      html`<li><a class="child-link" href="/s/${q(n.session.id)}">${n.session.title ?? n.session.id}</a> <span class="id">${n.session.id}</span>${tree(n.children)}</li>`,
  )}</ul>`;
}

function facts(session: SessionRecord): SafeHtml {
  const fact = (name: string, value: SafeHtml | string | null) =>
    value ? html`<div><dt>${name}</dt><dd>${value}</dd></div>` : "";
  return html`<dl class="facts">
${fact("id", session.id)}
${fact("cwd", session.cwd)}
${fact("model", session.model)}
${fact("mode", session.mode)}
${fact("prompt", session.promptId ? html`<a href="#prompt">${session.promptId}</a>` : null)}
${fact("parent", session.parentId ? html`<a class="parent-link" href="/s/${q(session.parentId)}">${session.parentId}</a>` : null)}
${fact("archive of", session.archivedFrom ? html`<a href="/s/${q(session.archivedFrom)}">${session.archivedFrom}</a>` : null)}
${fact("created", when(session.createdAt))}
${fact("updated", html`<time class="updated">${when(session.updatedAt)}</time>`)}
</dl>`;
}

export async function sessionPage(
  store: Store,
  session: SessionRecord,
  prices: Prices,
  marks?: MarkLoader,
): Promise<string> {
  const [folds, children, stats] = await Promise.all([
    session.archivedFrom ? Promise.resolve([]) : compactions(store, session),
    subagentTree(store, session.id),
    store.sessionStats([session.id]),
  ]);
  const summarySeq = folds.at(-1)?.summary !== undefined ? 1 : undefined;
  const first = await timelinePage(store, session.id, 0, summarySeq, marks);
  const s = stats.get(session.id);
  const price = priceOf(prices, session);
  const cost = s
    ? costOf(price, { promptTokens: s.promptTokens, completionTokens: s.completionTokens, totalTokens: 0 })
    : undefined;
  const prompt = session.promptId ? await store.getPrompt(session.promptId) : undefined;
  const trial = await trialOfSession(store, session.id, session.title);

  const body = html`<h1 class="session-title">${session.title ?? "(untitled)"}</h1>
${session.archivedFrom ? html`<p class="banner">This is an archive: the history a compaction or /clear replaced.</p>` : ""}
${facts(session)}
${trial ? html`<p class="eval-trial">eval trial ${trialFact(trial)}</p>` : ""}
<p class="totals"><span class="count">${s?.messages ?? 0}</span> <span class="count-word">${s?.messages === 1 ? "message" : "messages"}</span> · ${counted(s?.requests ?? 0, "LLM request")} · ${compact(s?.promptTokens ?? 0)} prompt + ${compact(s?.completionTokens ?? 0)} completion tokens${cost !== undefined ? ` · ${money(cost, price?.currency)}` : ""} <span class="live-state"></span></p>
<div class="columns">
<section class="timeline-column">
<div id="timeline" class="timeline">${first.html}</div>
<div id="timeline-end" data-next="${first.next}" data-more="${first.more ? "1" : "0"}">${first.more ? "loading more…" : ""}</div>
${s?.messages ? "" : html`<p class="empty">No messages yet.</p>`}
</section>
<aside class="side">
<section><h2>Tokens per request</h2><div id="chart" class="chart"></div><p class="chart-legend">prompt and completion tokens per LLM request; dashed lines: compactions${price ? "; cost cumulative (right axis)" : ""}</p></section>
<section id="prompt"><h2>System prompt</h2>
${session.promptId ? html`<p>version <strong class="prompt-version">${session.promptId}</strong>${prompt ? html` · stored ${when(prompt.createdAt)}` : ""}</p>` : html`<p>no prompt version recorded</p>`}
${session.systemPrompt ? html`<details class="system-prompt"><summary>rendered text (${session.systemPrompt.length} characters)</summary><pre>${session.systemPrompt}</pre></details>` : ""}
${prompt ? html`<details class="prompt-template"><summary>template</summary><pre>${prompt.content}</pre></details>` : ""}
</section>
<section id="compactions"><h2>Compactions and rewinds</h2>
${
  folds.length === 0
    ? html`<p class="none">none</p>`
    : html`<ol class="compactions">${folds.map(
        (
          f,
        ) => html`<li class="compaction"><div class="before-after"><span class="before">before: <a href="/s/${q(f.archive.id)}">${counted(f.messagesBefore, "message")}</a></span> → <span class="after">${f.rewoundTo !== undefined ? (f.rewoundTo === 0 ? "rewound to the start" : `rewound: kept the first ${counted(f.rewoundTo, "message")}`) : f.summary === undefined ? "cleared" : "after: first message, summary, latest request"}</span> <time>${when(f.at)}</time></div>
${f.summary !== undefined ? html`<details class="compaction-summary" open><summary>summary</summary><div class="md">${markdown(f.summary)}</div></details>` : ""}</li>`,
      )}</ol>`
}
</section>
<section id="subagents"><h2>Subagents</h2>${children.length ? tree(children) : html`<p class="none">none</p>`}</section>
</aside>
</div>`;
  return layout(session.title ?? session.id, body, {
    data: { page: "session", session: session.id, live: session.archivedFrom ? "0" : "1" },
  });
}
