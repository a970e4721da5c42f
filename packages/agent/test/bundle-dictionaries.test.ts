/**
 * The agent's bundle carries only the word lists session ids are made of (adjectives, colors, animals): the other
 * dictionaries of unique-names-generator (names, countries, Star Wars characters…) were parsed and built at every
 * start. scripts/bundle-options.mjs bundles the package's ES module build, whose unused lists are left out.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, test } from "node:test";
import { CROW_BIN } from "@crow/testkit";

const chunks = () => {
  const dir = path.dirname(CROW_BIN);
  return readdirSync(dir)
    .filter((file) => file.endsWith(".js"))
    .map((file) => ({ file, text: readFileSync(path.join(dir, file), "utf8") }));
};

describe("the agent's bundle: session-id words only", () => {
  test("no chunk holds the dictionaries session ids do not use", () => {
    // "Chewbacca" is in the Star Wars list, "Liechtenstein" in the countries: neither is in a session id.
    const unused = chunks().filter(({ text }) => text.includes("Chewbacca") || text.includes("Liechtenstein"));
    assert.deepEqual(
      unused.map(({ file }) => file),
      [],
    );
  });

  test("the lists session ids use are there", () => {
    // An animal and an adjective of unique-names-generator's lists.
    assert.ok(chunks().some(({ text }) => text.includes('"aardvark"') && text.includes('"able"')));
  });
});
