/**
 * One trial told in full (`crow eval report RUN --trial TASK`): its outcome and error, its named rewards, the time
 * of each phase, the Dockerfile steps it ran with, the end of what the verifier and the solver printed, a multi-step
 * task's steps, what the hooks printed and the artifacts collected.
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

/**
 * A trial's model requests and their tokens: `2 requests (500 prompt tokens, 40 of them cached; 50 completion
 * tokens)`. A provider that reports no usage leaves the tokens unknown, which is said rather than shown as 0.
 */
export function requestsText(
  trial: Pick<EvalTrialRecord, "requests" | "promptTokens" | "completionTokens" | "cachedTokens">,
): string {
  const requests = counted(trial.requests, "request");
  if (trial.requests === 0) return requests;
  if (trial.promptTokens + trial.completionTokens === 0) return `${requests} (the provider reported no token counts)`;
  const cached = trial.cachedTokens > 0 ? `, ${trial.cachedTokens} of them cached` : "";
  return `${requests} (${counted(trial.promptTokens, "prompt token")}${cached}; ${counted(trial.completionTokens, "completion token")})`;
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
    `- session: ${trial.sessionId ?? "none (oracle)"} · stop: ${trial.stopReason ?? "–"} · ${requestsText(trial)}, ${counted(trial.toolCalls, "tool call")} (${trial.toolErrors} failed)${trial.cost === null ? "" : ` · cost ${trial.cost.toFixed(4)}`}`,
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
  const steps = (d?.steps ?? []).map(
    (step) =>
      `\n### step ${step.name}: reward ${step.reward}${step.rewards ? ` (${JSON.stringify(step.rewards)})` : ""}\n\n` +
      `- error: ${step.error ?? "none"}${step.stopped ? `\n- stopped: ${step.stopped}` : ""}\n` +
      `- session: ${step.sessionId ?? "none (oracle)"}\n` +
      fenced("setup.sh and collect hooks", step.hookOutput) +
      fenced("verifier output", step.verifierOutput) +
      fenced("solver output", step.solverOutput),
  );
  const artifacts = (d?.artifacts ?? []).map(
    (artifact) =>
      `\n- artifact ${artifact.source} → ${artifact.destination}${artifact.note ? `: ${artifact.note}` : ""}` +
      (artifact.content === undefined ? "" : fenced(artifact.destination, artifact.content)),
  );
  return `${lines.join("\n")}\n${steps.join("")}${fenced("verifier output (tests/test.sh)", d?.verifierOutput)}${fenced("setup output (the Dockerfile's steps)", d?.setupOutput)}${fenced("solver output (solve.sh)", d?.solverOutput)}${fenced("collect hooks", d?.hookOutput)}${artifacts.join("")}`;
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
