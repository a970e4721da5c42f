/**
 * What `crow eval run` shows while it works: on a terminal, one progress line on stderr (done/total, passed so far,
 * cost so far, ETA), redrawn in place; with `--json`, one JSON event per line on stdout (`start`, `trial`, `end`);
 * otherwise one plain line per finished trial on stderr.
 */
import type { RunListener } from "./runner.js";
import type { TrialOutcome } from "./trial.js";

const BAR_WIDTH = 24;

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s` : `${s}s`;
}

export interface Progress extends RunListener {
  /** Ends the display (the bar's line is finished with a newline). */
  finish(interrupted: boolean): void;
}

/** The progress display for `mode`. */
export function createProgress(mode: "tty" | "json" | "lines", runId: string): Progress {
  let total = 0;
  let done = 0;
  let passed = 0;
  let cost = 0;
  /** Whether any trial had a price: without one the cost is unknown, not 0. */
  let priced = false;
  let ranHere = 0;
  const started = performance.now();
  const write = (line: string) => process.stderr.write(line);
  const draw = () => {
    const fraction = total > 0 ? done / total : 1;
    const filled = Math.round(fraction * BAR_WIDTH);
    const elapsed = performance.now() - started;
    const eta = ranHere > 0 ? duration((elapsed / ranHere) * (total - done)) : "?";
    write(
      `\r\x1b[2K[${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${done}/${total}  passed ${passed}  cost ${priced ? cost.toFixed(4) : "–"}  ETA ${eta}`,
    );
  };
  return {
    start(all, alreadyDone) {
      total = all;
      done = alreadyDone;
      if (mode === "json") process.stdout.write(`${JSON.stringify({ type: "start", runId, total, done })}\n`);
      else if (mode === "tty") draw();
      else
        write(
          `eval ${runId}: ${total - alreadyDone} trial(s) to run${alreadyDone > 0 ? `, ${alreadyDone} done before` : ""}\n`,
        );
    },
    trialDone(outcome: TrialOutcome) {
      done++;
      ranHere++;
      if (outcome.passed) passed++;
      cost += outcome.cost ?? 0;
      if (outcome.cost !== null) priced = true;
      if (mode === "json") {
        process.stdout.write(`${JSON.stringify({ type: "trial", done, total, ...outcome })}\n`);
      } else if (mode === "tty") draw();
      else {
        const verdict = outcome.passed ? "pass" : "FAIL";
        const why = outcome.error ? ` (${outcome.error.replace(/\s+/g, " ").slice(0, 120)})` : "";
        write(
          `[${done}/${total}] ${verdict} ${outcome.task} · ${outcome.variant} · #${outcome.trial} reward ${outcome.reward}${why}\n`,
        );
      }
    },
    finish(interrupted) {
      if (mode === "json")
        process.stdout.write(`${JSON.stringify({ type: "end", runId, done, total, interrupted })}\n`);
      else if (mode === "tty") write("\n");
      if (interrupted) write(`eval ${runId}: stopped; run 'crow eval run --resume ${runId}' to finish the rest.\n`);
    },
  };
}
