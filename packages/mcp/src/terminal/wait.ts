import type { Shell } from "./shell.js";

/** Why a wait ended. */
export type WaitEnd = "done" | "exited" | "quiet" | "input" | "ceiling" | "hard" | "aborted";

/** After this long without output, check whether the command is blocked reading the terminal; then every PROBE_EVERY_MS. */
const PROBE_QUIET_MS = 150;
const PROBE_EVERY_MS = 300;
/**
 * Once the probe says "waiting for input", wait this long before returning: a program writes its prompt and then
 * reads, so the prompt may still sit in the PTY buffer, not yet delivered to us, when the read is seen.
 */
const INPUT_SETTLE_MS = 100;

/** Limits of one wait; all optional. */
export interface WaitLimits {
  /** Return "quiet" after this long without output (a function: the threshold may depend on the output). */
  quietMs?: () => number;
  /** Return "ceiling" at this time (ms since epoch). */
  untilMs?: number;
  /** Return "hard" at this time (ms since epoch). */
  hardAtMs?: number;
  /** Asked after {@link PROBE_QUIET_MS} without output: is the command waiting for input? Then "input". */
  probe?: () => boolean;
  /** Return "aborted" when this aborts. */
  signal?: AbortSignal;
}

/**
 * Resolves when the shell finishes the command (or exits), or when a limit passes: `quietMs` without new output,
 * the `untilMs` deadline, the `hardAtMs` deadline, or the request's abort. Event-driven: completion resolves
 * from the output handler the moment the end marker is parsed; timers only serve the limits.
 */
export function waitFor(shell: Shell, limits: WaitLimits): Promise<WaitEnd> {
  const started = Date.now();
  return new Promise<WaitEnd>((resolve) => {
    let timer: NodeJS.Timeout | undefined;
    let timerAt = Number.POSITIVE_INFINITY;
    let probedAt = 0;
    let inputAt: number | undefined;
    const finish = (end: WaitEnd) => {
      if (timer) clearTimeout(timer);
      shell.onChange = undefined;
      limits.signal?.removeEventListener("abort", onAbort);
      resolve(end);
    };
    const onAbort = () => finish("aborted");
    const check = (fromTimer: boolean) => {
      if (shell.state === "exited") return finish("exited");
      if (shell.state !== "running") return finish("done");
      const now = Date.now();
      if (limits.hardAtMs !== undefined && now >= limits.hardAtMs) return finish("hard");
      if (limits.untilMs !== undefined && now >= limits.untilMs) return finish("ceiling");
      const quiet = limits.quietMs?.();
      const quietAt = quiet === undefined ? Number.POSITIVE_INFINITY : Math.max(shell.lastOutputAt, started) + quiet;
      if (now >= quietAt) return finish("quiet");
      let probeAt = Number.POSITIVE_INFINITY;
      if (inputAt !== undefined) {
        if (now >= inputAt + INPUT_SETTLE_MS) return finish("input");
        probeAt = inputAt + INPUT_SETTLE_MS;
      } else if (limits.probe) {
        probeAt = Math.max(Math.max(shell.lastOutputAt, started) + PROBE_QUIET_MS, probedAt + PROBE_EVERY_MS);
        if (now >= probeAt) {
          probedAt = now;
          if (limits.probe()) {
            inputAt = now;
            probeAt = now + INPUT_SETTLE_MS;
          } else probeAt = now + PROBE_EVERY_MS;
        }
      }
      const next = Math.min(
        quietAt,
        probeAt,
        limits.hardAtMs ?? Number.POSITIVE_INFINITY,
        limits.untilMs ?? Number.POSITIVE_INFINITY,
      );
      // Output only ever pushes the quiet deadline later, so a pending earlier timer is fine (it re-checks);
      // reschedule only when the next deadline moved earlier or the timer has fired.
      if (fromTimer || next < timerAt) {
        if (timer) clearTimeout(timer);
        timerAt = next;
        timer = Number.isFinite(next) ? setTimeout(() => check(true), Math.max(1, next - now)) : undefined;
      }
    };
    if (limits.signal?.aborted) return finish("aborted");
    limits.signal?.addEventListener("abort", onAbort, { once: true });
    shell.onChange = () => check(false);
    check(true);
  });
}
