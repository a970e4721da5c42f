/**
 * Session ids are read on screens and pasted into shared links: they are made of friendly words only (issue #52:
 * the library's adjectives gave ids such as "stupid-…" and "toxic-…"). Through the real SQLite store.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { openStore } from "../src/index.js";
import { ADJECTIVES } from "../src/store/id-words.js";

/** Words the old list held that must never name a session. */
const UNKIND = ["stupid", "toxic", "drunk", "dead", "dying", "evil", "ugly", "ugliest", "naked", "sexual", "booby"];

test("session ids: adjective-colour-animal-hex from friendly words, never an unkind one", async () => {
  const dir = await mkdtemp(path.join(tmpdir(), "crow-ids-"));
  const store = await openStore(path.join(dir, "crow.db"));
  try {
    for (let i = 0; i < 300; i++) {
      const { id } = await store.createSession({ cwd: dir });
      assert.match(id, /^[a-z]+-[a-z]+-[a-z]+-[0-9a-f]{6}$/);
      const words = id.split("-");
      assert.ok(ADJECTIVES.includes(words[0] ?? ""), id);
      assert.ok(!words.some((w) => UNKIND.includes(w)), id);
    }
    assert.ok(!ADJECTIVES.some((a) => UNKIND.includes(a)));
    assert.ok(ADJECTIVES.length >= 200, `${ADJECTIVES.length} adjectives`);
  } finally {
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
});
