import { randomBytes } from "node:crypto";
import { animals, colors, uniqueNamesGenerator } from "unique-names-generator";
import { ADJECTIVES } from "./id-words.js";

/** The library's animals but one that reads as something else in a name. */
const ANIMALS = animals.filter((animal) => animal !== "booby");

/**
 * A memorable session id: `adjective-color-animal-xxxxxx` (e.g. `brave-purple-tiger-a3f2c1`), from friendly words
 * (id-words.ts). The 24 random bits on top of ~3.9·10⁶ word combinations make a clash very unlikely;
 * `createSession` still retries on one.
 */
export function sessionSlug(): string {
  const words = uniqueNamesGenerator({ dictionaries: [[...ADJECTIVES], colors, ANIMALS], separator: "-", length: 3 });
  return `${words.toLowerCase().replace(/[^a-z0-9-]/g, "")}-${randomBytes(3).toString("hex")}`;
}

/** A slug for an archive of `sessionId` (compaction, `/clear`): recognisable, unique. */
export function archiveSlug(sessionId: string, kind: "archive" | "clear" | "rewind" = "archive"): string {
  return `${sessionId}~${kind}-${randomBytes(4).toString("hex")}`;
}
