/** Markdown for `crow eval report` and `compare` (JSON is the summaries themselves). */
import type { EvalRunRecord, EvalTrialRecord } from "@crow/core";
import type { Comparison, VariantSummary } from "./summary.js";

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const money = (x: number | null) => (x === null ? "–" : x.toFixed(4));
const count = (x: number | null) => (x === null ? "–" : Math.round(x).toLocaleString("en-US"));
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The report of one run: a table of variants, then the tasks × variants matrix and the errors. */
export function renderReport(
  run: EvalRunRecord,
  summaries: readonly VariantSummary[],
  trials: readonly EvalTrialRecord[],
): string {
  const lines = [`# Eval run ${run.id}${run.name ? ` (${run.name})` : ""}`, "", `Suite: ${run.suite}`, ""];
  const withK = summaries.some((s) => s.passAtK !== null);
  const k = summaries[0]?.k ?? 1;
  lines.push(
    `| variant | passed | pass rate (95 % CI) |${withK ? ` pass@${k} | pass^${k} |` : ""} cost | cost / solved | tokens / solved | median time | errors |`,
    `| --- | --- | --- |${withK ? " --- | --- |" : ""} --- | --- | --- | --- | --- |`,
  );
  for (const s of summaries) {
    const ks = withK
      ? ` ${s.passAtK === null ? "–" : pct(s.passAtK)} | ${s.passHatK === null ? "–" : pct(s.passHatK)} |`
      : "";
    lines.push(
      `| ${s.variant} | ${s.passed}/${s.trials} | ${pct(s.passRate)} (${pct(s.interval[0])} – ${pct(s.interval[1])}) |${ks} ${money(s.cost)} | ${money(s.costPerSolved)} | ${count(s.tokensPerSolved)} | ${secs(s.medianWallMs)} | ${s.errors} |`,
    );
  }
  const variants = summaries.map((s) => s.variant);
  const tasks = [...new Set(trials.map((t) => t.task))].sort();
  lines.push(
    "",
    "## Tasks",
    "",
    `| task | ${variants.join(" | ")} |`,
    `| --- |${variants.map(() => " --- |").join("")}`,
  );
  for (const task of tasks) {
    const cells = variants.map((variant) => {
      const mine = trials.filter((t) => t.task === task && t.variant === variant);
      return mine.length === 0 ? "–" : `${mine.filter((t) => t.passed).length}/${mine.length}`;
    });
    lines.push(`| ${task} | ${cells.join(" | ")} |`);
  }
  const failed = trials.filter((t) => t.error !== null);
  if (failed.length > 0) {
    lines.push("", "## Errors", "");
    for (const t of failed) {
      const error = (t.error ?? "").replace(/\s+/g, " ").slice(0, 300);
      lines.push(`- ${t.task} · ${t.variant} · #${t.trial}${t.sessionId ? ` (session ${t.sessionId})` : ""}: ${error}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The comparison of B against A. */
export function renderComparison(comparison: Comparison): string {
  const c = comparison;
  const signed = (x: number) => `${x >= 0 ? "+" : ""}${(x * 100).toFixed(1)} pts`;
  const lines = [
    `# ${c.a} vs ${c.b}`,
    "",
    `Tasks compared: ${c.tasks}`,
    `Pass rate: ${pct(c.passRateA)} → ${pct(c.passRateB)} (${signed(c.difference)}, 95 % paired bootstrap ${signed(c.interval[0])} … ${signed(c.interval[1])})`,
    `Verdict: ${c.regression ? "REGRESSION (B is worse beyond the interval)" : c.interval[0] > 0 ? "improvement (B is better beyond the interval)" : "no significant difference"}`,
    "",
    `Regressed (passed in fewer of its trials in B than in A): ${c.regressed.length > 0 ? c.regressed.join(", ") : "none"}`,
    `Fixed (passed in more of its trials in B than in A): ${c.fixed.length > 0 ? c.fixed.join(", ") : "none"}`,
  ];
  return `${lines.join("\n")}\n`;
}
