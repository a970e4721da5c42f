/**
 * The work budget of one edit's fuzzy search, and the two ways of running it. The fuzzy matchers and the
 * closest-lines search are written as generators that charge a {@link WorkBudget} for what they do and `yield` at
 * pause points: {@link runSync} runs such a search to the end in one go (tests, benches, callers that do not share
 * their thread), {@link runAsync} hands the event loop back every few milliseconds so a long search never holds up
 * the other sessions of a shared crow-mcp. Either way the budget makes the search give up, deterministically, once
 * it has done {@link FUZZY_WORK_LIMIT} units of work.
 */
/**
 * Units of work one edit's fuzzy search may spend before it gives up. A unit is about one character compared or
 * copied, or one line looked at; the limit is under a second of CPU on a slow machine. A fuzzy edit of an ordinary
 * source file of 100 000 lines spends at most a few million, of a 10 MB one about 15 million.
 */
export const FUZZY_WORK_LIMIT = 60_000_000;
/** Units between two pause points (a fraction of a millisecond of work). */
const PAUSE_EVERY = 20_000;
/** {@link runAsync} gives the event loop back after this much time without a pause. */
const SLICE_MS = 4;

/** A search that can pause: it yields at its pause points and returns its result. */
export type Work<T> = Generator<void, T, undefined>;

/** Thrown (inside the engine) when a search has spent its budget; the cascade turns it into a refusal. */
export class WorkBudgetExhausted extends Error {
  constructor(readonly spent: number) {
    super(`the fuzzy search gave up after ${spent} units of work`);
    this.name = "WorkBudgetExhausted";
  }
}

/** The work one edit may still do. Shared by every matcher of the cascade and the closest-lines search. */
export class WorkBudget {
  private used = 0;
  private nextPause = PAUSE_EVERY;

  constructor(readonly limit: number = FUZZY_WORK_LIMIT) {}

  /** Units spent so far. */
  get spent(): number {
    return this.used;
  }

  /**
   * Records `units` of work. Returns true when the search has reached a pause point and should `yield`; throws
   * {@link WorkBudgetExhausted} once the limit is passed.
   */
  charge(units: number): boolean {
    this.used += units;
    if (this.used < this.nextPause) return false;
    if (this.used > this.limit) throw new WorkBudgetExhausted(this.used);
    this.nextPause = this.used + PAUSE_EVERY;
    return true;
  }
}

/** What a Levenshtein distance of strings of these lengths costs (fastest-levenshtein: a word op per 32 chars). */
export function levenshteinCost(aLength: number, bLength: number): number {
  const longer = Math.max(aLength, bLength);
  return Math.ceil(Math.min(aLength, bLength) / 32) * longer + longer;
}

/** Runs `work` to its end without pausing. */
export function runSync<T>(work: Work<T>): T {
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
  }
}

/** Gives the event loop a turn: pending I/O and other sessions' calls run before the search goes on. */
export function giveTurn(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 0));
}

/**
 * Runs `work`, awaiting `pause` whenever it has run {@link SLICE_MS} ms since the last one, so a long search shares
 * the thread. The result is the one {@link runSync} gives: pauses change when the work is done, never what it does.
 */
export async function runAsync<T>(work: Work<T>, pause: () => Promise<void> = giveTurn): Promise<T> {
  let since = performance.now();
  for (;;) {
    const step = work.next();
    if (step.done) return step.value;
    if (performance.now() - since >= SLICE_MS) {
      await pause();
      since = performance.now();
    }
  }
}
