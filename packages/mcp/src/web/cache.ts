/**
 * A small time-limited cache (insertion-ordered map, oldest evicted first). web_fetch keeps converted pages in
 * one per connection so that paging through a long page with `start_index` converts it once and fetches it once.
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number; size: number }>();
  private total = 0;

  /**
   * @param ttlMs how long an entry stays valid
   * @param maxEntries most entries kept
   * @param maxSize most total size kept (as measured by `sizeOf`), so a few huge pages cannot pin much memory
   * @param sizeOf size of a value (default 1 per entry)
   * @param now clock, replaceable in tests
   */
  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries: number,
    private readonly maxSize = Number.POSITIVE_INFINITY,
    private readonly sizeOf: (value: V) => number = () => 1,
    private readonly now: () => number = Date.now,
  ) {}

  /** The value for `key` if present and not expired. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expires <= this.now()) {
      this.delete(key);
      return undefined;
    }
    return entry.value;
  }

  /** Stores `value`; a value larger than the whole budget is not stored at all. */
  set(key: string, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.maxSize) return;
    this.entries.set(key, { value, expires: this.now() + this.ttlMs, size });
    this.total += size;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.total <= this.maxSize) break;
      this.delete(oldest);
    }
  }

  /** Number of entries (expired ones included until they are looked up or evicted). */
  get size(): number {
    return this.entries.size;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  private delete(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.total -= entry.size;
  }
}
