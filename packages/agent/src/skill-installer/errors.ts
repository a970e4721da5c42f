/** Thrown for a source or skill that cannot be used; the message says what was wrong and what to do. */
export class SourceError extends Error {}

/** A SOURCE argument that cannot be read as any kind of source: a usage error (exit 2). */
export class SourceUsageError extends SourceError {}
