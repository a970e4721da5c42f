/**
 * Splitting a byte stream into lines (one JSON-RPC message each) with a cap on a line's length that costs nothing
 * but the line: a line over the cap is not an error that ends the stream, it is skipped — its bytes counted and
 * dropped as they come, keeping only its first and last bytes, from which the message's id can often be read — and
 * the next line is read as usual. Both stdio servers (crow-mcp's, `crow acp`'s) and the unix socket use it.
 */

/** What is known of a line that was over the cap (it was dropped). */
export interface OversizeLine {
  /** Its length in bytes, without the newline. */
  bytes: number;
  /** The cap it went over. */
  limit: number;
  /** Its first bytes (at most {@link HEAD_BYTES}). */
  head: Buffer;
  /** Its last bytes (at most {@link TAIL_BYTES}). */
  tail: Buffer;
}

/** Bytes kept of an oversize line's start: where a message's `jsonrpc`, `id` and `method` usually are. */
export const HEAD_BYTES = 1024;
/** Bytes kept of its end: where the MCP SDK puts `jsonrpc` and `id` (after the params). */
export const TAIL_BYTES = 256;

const NEWLINE = 0x0a;

const lastBytes = (buffer: Buffer, count: number): Buffer =>
  buffer.length > count ? buffer.subarray(buffer.length - count) : buffer;

export class BoundedLineSplitter {
  /** The pieces of the line being received (all within the cap). */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  /** The line being skipped, once it went over the cap. */
  private skipping: OversizeLine | undefined;

  constructor(
    private readonly limit: number,
    /** A complete line within the cap, without its newline (a view into the received chunk: not copied). */
    private readonly onLine: (line: Buffer) => void,
    /** A line over the cap, once its newline arrived. */
    private readonly onOversize: (line: OversizeLine) => void,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end >= 0; end = chunk.indexOf(NEWLINE, start)) {
      this.append(chunk.subarray(start, end));
      start = end + 1;
      const skipped = this.skipping;
      const parts = this.partial;
      this.partial = [];
      this.partialBytes = 0;
      this.skipping = undefined;
      if (skipped) this.onOversize(skipped);
      else this.onLine(parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts));
    }
    if (start < chunk.length) this.append(chunk.subarray(start));
  }

  /** The stream ended: a last line without a newline counts as a line (or an oversize one). */
  end(): void {
    if (this.pending) this.push(Buffer.from([NEWLINE]));
  }

  /** True while a line is only partly received. */
  get pending(): boolean {
    return this.partialBytes > 0 || this.skipping !== undefined;
  }

  private append(piece: Buffer): void {
    if (this.skipping) {
      this.skipping.bytes += piece.length;
      this.skipping.tail = lastBytes(Buffer.concat([this.skipping.tail, lastBytes(piece, TAIL_BYTES)]), TAIL_BYTES);
      return;
    }
    if (this.partialBytes + piece.length <= this.limit) {
      this.partial.push(piece);
      this.partialBytes += piece.length;
      return;
    }
    // Over the cap: keep its ends, let go of the rest.
    const pieces = [...this.partial, piece];
    const head: Buffer[] = [];
    for (let kept = 0, i = 0; kept < HEAD_BYTES && i < pieces.length; i++) {
      const part = (pieces[i] as Buffer).subarray(0, HEAD_BYTES - kept);
      head.push(part);
      kept += part.length;
    }
    const before = this.partial.at(-1);
    this.skipping = {
      bytes: this.partialBytes + piece.length,
      limit: this.limit,
      head: Buffer.concat(head),
      tail: Buffer.from(lastBytes(before ? Buffer.concat([lastBytes(before, TAIL_BYTES), piece]) : piece, TAIL_BYTES)),
    };
    this.partial = [];
    this.partialBytes = 0;
  }
}
