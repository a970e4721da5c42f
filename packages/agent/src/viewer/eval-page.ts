/**
 * The eval pages of the viewer: the list of runs (`/evals`), one run (`/evals/RUN`: its variants' numbers and the
 * tasks × variants matrix, each trial a link to its session), and two runs side by side
 * (`/evals/compare?a=RUN[:VARIANT]&b=RUN[:VARIANT]`: the tasks of both, the flips and the paired interval).
 */
import type { EvalRunRecord, EvalTrialRecord, Store } from "@crow/core";
import { counted } from "../base/plural.js";
import { type Comparison, compareTrials, summarize, type VariantSummary, variantsOf } from "../eval/summary.js";
import { requestsText } from "../eval/trial-report.js";
import { html, layout, q, type SafeHtml, when } from "./html.js";

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const cost = (x: number | null) => (x === null ? "" : x.toFixed(4));

/** The id of a trial's section on its run's page. */
export function trialAnchor(trial: Pick<EvalTrialRecord, "task" | "variant" | "trial">): string {
  return `trial-${trial.task}-${trial.variant}-${trial.trial}`.replace(/[^\w.-]+/g, "_");
}

/** One trial as a mark linking to its details below (✓ passed, ✗ failed; the error also as its tooltip). */
function mark(trial: EvalTrialRecord): SafeHtml {
  const symbol = trial.passed ? "✓" : "✗";
  const title = `#${trial.trial} reward ${trial.reward}${trial.error ? ` — ${trial.error}` : ""}`;
  const cls = trial.passed ? "trial pass" : "trial fail";
  return html`<a class="${cls}" href="/evals/${q(trial.runId)}#${trialAnchor(trial)}" title="${title}">${symbol}</a>`;
}

const secs = (ms: number | undefined) => (ms === undefined ? "–" : `${(ms / 1000).toFixed(1)} s`);

/** A trial in full: outcome, error, time per phase, cost, rewards, its session, and what its scripts printed. */
function trialDetails(trial: EvalTrialRecord): SafeHtml {
  const d = trial.details;
  const output = (label: string, text: string | undefined) =>
    text?.trim() ? html`<details class="trial-output"><summary>${label}</summary><pre>${text}</pre></details>` : "";
  return html`<section class="trial ${trial.passed ? "pass" : "fail"}" id="${trialAnchor(trial)}" data-task="${trial.task}">
<h3>${trial.task} · ${trial.variant} · #${trial.trial}: ${trial.passed ? "passed" : "failed"} (reward ${trial.reward})</h3>
${trial.error ? html`<p class="trial-error">${trial.error}</p>` : ""}
<p class="trial-facts">time ${secs(trial.wallMs)} (setup ${secs(d?.phaseMs?.setup)}, agent ${secs(d?.phaseMs?.agent)}, verifier ${secs(d?.phaseMs?.verifier)})${trial.cost === null ? "" : ` · cost ${cost(trial.cost)}`} · ${requestsText(trial)} · ${counted(trial.toolCalls, "tool call")}${
    d?.rewards
      ? ` · rewards ${Object.entries(d.rewards)
          .map(([n, v]) => `${n} ${v}`)
          .join(", ")}`
      : ""
  }${trial.sessionId ? html` · <a class="trial-session" href="/s/${q(trial.sessionId)}">session</a>` : ""}</p>
${d?.emulated ? html`<p class="trial-emulated">environment emulated from its Dockerfile: ${d.emulated.join(" · ")}</p>` : ""}
${output("verifier output", d?.verifierOutput)}${output("setup output", d?.setupOutput)}${output("solver output", d?.solverOutput)}
</section>`;
}

function cell(trials: readonly EvalTrialRecord[]): SafeHtml {
  if (trials.length === 0) return html`<td class="cell">–</td>`;
  const passed = trials.filter((t) => t.passed).length;
  return html`<td class="cell" data-passed="${passed}" data-trials="${trials.length}">${passed}/${trials.length} ${trials.map(mark)}</td>`;
}

function summaryTable(summaries: readonly VariantSummary[]): SafeHtml {
  return html`<table class="eval-summary">
<thead><tr><th>variant</th><th>passed</th><th>pass rate (95 % CI)</th><th>pass@k</th><th>pass^k</th><th>cost</th><th>cost / solved</th><th>tokens / solved</th><th>median time</th><th>errors</th></tr></thead>
<tbody>${summaries.map(
    (s) => html`<tr data-variant="${s.variant}"><th>${s.variant}</th><td class="num">${s.passed}/${s.trials}</td>
<td class="num">${pct(s.passRate)} (${pct(s.interval[0])} – ${pct(s.interval[1])})</td>
<td class="num">${s.passAtK === null ? "" : `${pct(s.passAtK)} (k=${s.k})`}</td><td class="num">${s.passHatK === null ? "" : pct(s.passHatK)}</td>
<td class="num">${cost(s.cost)}</td><td class="num">${cost(s.costPerSolved)}</td>
<td class="num">${s.tokensPerSolved === null ? "" : Math.round(s.tokensPerSolved)}</td>
<td class="num">${(s.medianWallMs / 1000).toFixed(1)} s</td><td class="num">${s.errors}</td></tr>`,
  )}</tbody></table>`;
}

/** The tasks × columns matrix; a column is a variant's trials (possibly of different runs). */
function matrix(columns: ReadonlyArray<{ label: string; trials: readonly EvalTrialRecord[] }>): SafeHtml {
  const tasks = [...new Set(columns.flatMap((c) => c.trials.map((t) => t.task)))].sort();
  return html`<table class="eval-matrix">
<thead><tr><th>task</th>${columns.map((c) => html`<th>${c.label}</th>`)}</tr></thead>
<tbody>${tasks.map(
    (task) =>
      html`<tr data-task="${task}"><th>${task}</th>${columns.map((c) => cell(c.trials.filter((t) => t.task === task)))}</tr>`,
  )}</tbody></table>`;
}

/**
 * The eval trial a session ran (its title is `eval RUN TASK VARIANT #N`, set by crow eval), for the session page's
 * link back to its run and its reward; undefined for other sessions.
 */
export async function trialOfSession(
  store: Store,
  sessionId: string,
  title: string | null,
): Promise<EvalTrialRecord | undefined> {
  const [, runId, task, variant, index] = /^eval (\S+) (\S+) (\S+) #(\d+)$/.exec(title ?? "") ?? [];
  if (!runId) return undefined;
  return (await store.evals.listTrials(runId)).find(
    (t) => t.sessionId === sessionId && t.task === task && t.variant === variant && t.trial === Number(index),
  );
}

/** The session page's line about its eval trial. */
export function trialFact(trial: EvalTrialRecord): SafeHtml {
  return html`<a class="eval-trial-link" href="/evals/${q(trial.runId)}#${trialAnchor(trial)}">${trial.runId} · ${trial.task} #${trial.trial}</a>: ${trial.passed ? "passed" : "failed"}, reward ${trial.reward}${trial.error ? ` (${trial.error.slice(0, 200)})` : ""}`;
}

export async function evalRunsPage(store: Store): Promise<string> {
  const runs = await store.evals.listRuns(200);
  const body = html`<h1>Eval runs</h1>
${
  runs.length === 0
    ? html`<p class="empty">No eval runs in ${store.location} yet (crow eval run SUITE).</p>`
    : html`<table class="eval-runs"><thead><tr><th>run</th><th>name</th><th>suite</th><th>started</th></tr></thead>
<tbody>${runs.map(
        (r: EvalRunRecord) =>
          html`<tr><td><a href="/evals/${q(r.id)}">${r.id}</a></td><td>${r.name ?? ""}</td><td>${r.suite}</td><td><time>${when(r.createdAt)}</time></td></tr>`,
      )}</tbody></table>
<form method="get" action="/evals/compare" class="filters"><input name="a" placeholder="run A[:variant]"> <input name="b" placeholder="run B[:variant]"> <button type="submit">Side by side</button></form>`
}`;
  return layout("Eval runs", body, { data: { page: "evals" } });
}

export async function evalRunPage(store: Store, run: EvalRunRecord): Promise<string> {
  const trials = await store.evals.listTrials(run.id);
  const variants = variantsOf(trials, run);
  const summaries = variants.map((v) => summarize(v, trials));
  const total = trials.reduce((sum, t) => sum + (t.cost ?? 0), 0);
  const body = html`<h1>Eval run ${run.id}${run.name ? html` <span class="id">${run.name}</span>` : ""}</h1>
<p>Suite ${run.suite} · started <time>${when(run.createdAt)}</time> · ${counted(trials.length, "trial")} recorded, ${trials.filter((t) => t.passed).length} passed${total > 0 ? ` · cost ${total.toFixed(4)}` : ""}</p>
${summaryTable(summaries)}
<h2>Tasks × variants</h2>
${matrix(variants.map((v) => ({ label: v, trials: trials.filter((t) => t.variant === v) })))}
<h2>Trials</h2>
${[...trials].sort((a, b) => Number(a.passed) - Number(b.passed)).map(trialDetails)}`;
  return layout(`Eval ${run.id}`, body, { data: { page: "eval-run" } });
}

/** One side of the comparison page, or why it cannot be one. */
export async function evalSide(
  store: Store,
  spec: string,
): Promise<{ label: string; trials: EvalTrialRecord[] } | string> {
  const colon = spec.indexOf(":");
  const runId = colon >= 0 ? spec.slice(0, colon) : spec;
  const trials = await store.evals.listTrials(runId);
  const variants = variantsOf(trials);
  const variant = colon >= 0 ? spec.slice(colon + 1) : variants.length === 1 ? variants[0] : undefined;
  if (variant === undefined || !variants.includes(variant)) {
    return `"${spec}" names no single variant: give RUN:VARIANT (variants of ${runId}: ${variants.join(", ") || "none recorded"}).`;
  }
  return { label: `${runId}:${variant}`, trials: trials.filter((t) => t.variant === variant) };
}

export function evalComparePage(
  a: { label: string; trials: EvalTrialRecord[] },
  b: { label: string; trials: EvalTrialRecord[] },
): string {
  const c: Comparison = compareTrials(a, b);
  const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)} pts`;
  const body = html`<h1>Eval runs side by side</h1>
<p class="verdict">${pct(c.passRateA)} → ${pct(c.passRateB)} (${signed(c.difference)}; 95 % paired bootstrap ${signed(c.interval[0])} … ${signed(c.interval[1])})${c.regression ? html` <strong>regression</strong>` : ""}</p>
<p>Regressed: ${c.regressed.join(", ") || "none"} · Fixed: ${c.fixed.join(", ") || "none"}</p>
${summaryTable([summarize(a.trials[0]?.variant ?? "", a.trials), summarize(b.trials[0]?.variant ?? "", b.trials)].map((s, i) => ({ ...s, variant: i === 0 ? a.label : b.label })))}
${matrix([a, b])}`;
  return layout("Eval runs side by side", body, { data: { page: "eval-compare" } });
}
