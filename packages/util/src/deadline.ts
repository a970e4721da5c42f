/**
 * A network deadline that keeps firing. `AbortSignal.any([caller, AbortSignal.timeout(ms)])` loses its timeout once
 * the timeout signal is garbage-collected (nodejs/node#57736): a server dripping a byte a second then holds the
 * request for as long as it likes. Here a plain timer owns the controller, so nothing the deadline needs can be
 * collected before it fires or is cleared.
 */

/** One request's deadline combined with the caller's cancellation. */
export interface Deadline {
  /** Aborted when the time is up or the caller's signal aborts, whichever comes first. */
  readonly signal: AbortSignal;
  /** Whether the time ran out (as opposed to the caller cancelling). */
  timedOut(): boolean;
  /** Stops the timer and lets go of the caller's signal; call it when the request is over, however it ended. */
  clear(): void;
}

/** Starts a deadline of `ms` milliseconds, aborting early with `caller`. */
export function startDeadline(ms: number, caller?: AbortSignal): Deadline {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new DOMException(`The operation timed out after ${ms} ms`, "TimeoutError"));
  }, ms);
  const onCancel = () => controller.abort(caller?.reason);
  if (caller?.aborted) onCancel();
  else caller?.addEventListener("abort", onCancel, { once: true });
  return {
    signal: controller.signal,
    timedOut: () => expired,
    clear: () => {
      clearTimeout(timer);
      caller?.removeEventListener("abort", onCancel);
    },
  };
}
