/** Thrown for a source or skill that cannot be used; the message says what was wrong and what to do. */
export class SourceError extends Error {}
