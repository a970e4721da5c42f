/**
 * Two sessions side by side — e.g. two prompt versions on the same task: model, prompt version, LLM requests
 * (steps), tokens, tool calls and tool errors, compactions and cost, with the difference of each figure.
 */
import type { SessionRecord, Store } from "@crow/core";
import { html, layout, money, q } from "./html.js";
import { type Figures, figures, type Prices } from "./insights.js";

function delta(a: number | undefined, b: number | undefined, digits = 0): string {
  if (a === undefined || b === undefined) return "";
  const d = b - a;
  const text = digits ? d.toFixed(digits) : String(d);
  return d > 0 ? `+${text}` : text;
}

export async function comparePage(store: Store, a: SessionRecord, b: SessionRecord, prices: Prices): Promise<string> {
  const [fa, fb] = await Promise.all([figures(store, a, prices), figures(store, b, prices)]);
  const rows: Array<[string, (f: Figures) => number | undefined]> = [
    ["LLM requests (steps)", (f) => f.requests],
    ["prompt tokens", (f) => f.promptTokens],
    ["completion tokens", (f) => f.completionTokens],
    ["user messages", (f) => f.userMessages],
    ["tool calls", (f) => f.toolCalls],
    ["tool errors", (f) => f.toolErrors],
    ["compactions", (f) => f.compactions],
  ];
  const head = (s: SessionRecord) =>
    html`<th><a href="/s/${q(s.id)}">${s.title ?? s.id}</a><div class="id">${s.id}</div></th>`;
  const text = (name: string, va: string, vb: string) =>
    html`<tr><th>${name}</th><td>${va}</td><td>${vb}</td><td></td></tr>`;
  const body = html`<h1>Side by side</h1>
<table class="compare">
<thead><tr><th></th>${head(a)}${head(b)}<th>difference</th></tr></thead>
<tbody>
${text("model", a.model ?? "", b.model ?? "")}
${text("prompt version", a.promptId ?? "", b.promptId ?? "")}
${rows.map(([name, get]) => html`<tr data-figure="${name}"><th>${name}</th><td class="num">${get(fa)}</td><td class="num">${get(fb)}</td><td class="num">${delta(get(fa), get(fb))}</td></tr>`)}
<tr data-figure="cost"><th>cost</th><td class="num">${money(fa.cost, fa.currency)}</td><td class="num">${money(fb.cost, fb.currency)}</td><td class="num">${fa.currency === fb.currency ? delta(fa.cost, fb.cost, 4) : ""}</td></tr>
</tbody></table>`;
  return layout("Side by side", body, { data: { page: "compare" } });
}
