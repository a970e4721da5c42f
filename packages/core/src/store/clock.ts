let lastStamp = 0;

/**
 * The time of a store write as an ISO string, strictly increasing within this process: two writes in the same
 * millisecond (a compaction and a /clear, two archives) must still sort in the order they happened, since listings
 * order by these stamps.
 */
export function now(): string {
  lastStamp = Math.max(Date.now(), lastStamp + 1);
  return new Date(lastStamp).toISOString();
}
