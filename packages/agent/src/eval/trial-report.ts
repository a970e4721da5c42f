/**
 * One trial told in full (`crow eval report RUN --trial TASK`): its outcome and error, its named rewards, the time
 * of each phase, the Dockerfile steps it ran with, and the end of what the verifier and the solver printed.
 */
import type { EvalTrialRecord } from "@crow/core";
import { counted } from "../base/plural.js";

const seconds = (ms: number | undefined) => (ms === undefined ? "–" : `${(ms / 1000).toFixed(1)} s`);

function fenced(title: string, text: string | undefined): string {
  if (!text?.trim()) return "";
  const fence = text.includes("```") ? "~~~~" : "```";
  return `\n${title}:\n${fence}\n${text.trimEnd()}\n${fence}\n`;
}

/** The anchor of a trial on the viewer's run page, and its name in text. */
export function trialKey(trial: Pick<EvalTrialRecord, "task" | "variant" | "trial">): string {
  return `${trial.task} · ${trial.variant} · #${trial.trial}`;
}

/** Markdown for one trial. */
export function renderTrial(trial: EvalTrialRecord): string {
  const d = trial.details;
  const phases = d?.phaseMs;
  const lines = [
    `## ${trialKey(trial)}: ${trial.passed ? "passed" : "FAILED"} (reward ${trial.reward})`,
    "",
    `- error: ${trial.error ?? "none"}`,
    `- time: ${seconds(trial.wallMs)} (setup ${seconds(phases?.setup)}, agent ${seconds(phases?.agent)}, verifier ${seconds(phases?.verifier)})`,
    `- session: ${trial.sessionId ?? "none (oracle)"} · stop: ${trial.stopReason ?? "–"} · ${counted(trial.requests, "request")}, ${counted(trial.toolCalls, "tool call")} (${trial.toolErrors} failed)${trial.cost === null ? "" : ` · cost ${trial.cost.toFixed(4)}`}`,
  ];
  if (d?.rewards) {
    lines.push(
      `- rewards: ${Object.entries(d.rewards)
        .map(([name, value]) => `${name} ${value}`)
        .join(", ")}`,
    );
  }
  if (d?.attempt) lines.push(`- attempt ${d.attempt.number} on ${d.attempt.worker}`);
  if (d?.emulated) lines.push(`- environment emulated from its Dockerfile: ${d.emulated.join(" · ")}`);
  return `${lines.join("\n")}\n${fenced("verifier output (tests/test.sh)", d?.verifierOutput)}${fenced("setup output (the Dockerfile's steps)", d?.setupOutput)}${fenced("solver output (solve.sh)", d?.solverOutput)}`;
}

/**
 * The trials `spec` names: `TASK`, `TASK:VARIANT`, with `#N` for one repetition (`py-fix#0`, `py-fix:oracle#1`).
 */
export function selectTrials(trials: readonly EvalTrialRecord[], spec: string): EvalTrialRecord[] {
  const match = /^([^:#]+)(?::([^#]+))?(?:#(\d+))?$/.exec(spec);
  if (!match) return [];
  const [, task, variant, index] = match;
  return trials.filter(
    (t) =>
      t.task === task &&
      (variant === undefined || t.variant === variant) &&
      (index === undefined || t.trial === Number(index)),
  );
}
