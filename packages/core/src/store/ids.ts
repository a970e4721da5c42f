import { randomBytes } from "node:crypto";
import { adjectives, animals, colors, uniqueNamesGenerator } from "unique-names-generator";

/**
 * A memorable session id: `adjective-color-animal-xxxxxx` (e.g. `brave-purple-tiger-a3f2c1`). The 24 random bits
 * on top of ~2·10⁷ word combinations make a clash very unlikely; `createSession` still retries on one.
 */
export function sessionSlug(): string {
  const words = uniqueNamesGenerator({ dictionaries: [adjectives, colors, animals], separator: "-", length: 3 });
  return `${words.toLowerCase().replace(/[^a-z0-9-]/g, "")}-${randomBytes(3).toString("hex")}`;
}

/** A slug for an archive of `sessionId` (compaction, `/clear`): recognisable, unique. */
export function archiveSlug(sessionId: string, kind: "archive" | "clear" | "rewind" = "archive"): string {
  return `${sessionId}~${kind}-${randomBytes(4).toString("hex")}`;
}
