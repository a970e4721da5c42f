/**
 * The viewer's timeline shows a file attached to a prompt as its lines, not as run-on Markdown prose: what the agent
 * inlined for `@path` (prompt-content.ts) keeps its line breaks under the file's name.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { openStore } from "@crow/core";
import { timelinePage } from "../src/viewer/timeline.js";

test("a file attached to a prompt renders as its lines under its name; the prompt's own text as Markdown", async () => {
  const store = await openStore(":memory:");
  try {
    const session = await store.createSession({ cwd: "/work" });
    const file = "File /work/notes.md:\n     1\tfirst line\n     2\t- second *line*\n";
    await store.appendMessages(session.id, [
      {
        message: {
          role: "user",
          content: [
            { type: "text", text: "summarize **@notes.md**" },
            { type: "text", text: file },
          ],
        },
      },
    ]);
    const { html } = await timelinePage(store, session.id, 0);
    const page = String(html);
    assert.match(page, /<div class="md"><p>summarize <strong>@notes\.md<\/strong><\/p>/);
    assert.match(
      page,
      /<details class="attachment" open><summary>File \/work\/notes\.md<\/summary><pre> {5}1\tfirst line\n {5}2\t- second \*line\*\n<\/pre><\/details>/,
    );
  } finally {
    await store.close();
  }
});

test("crow run's prompt with an @file in one text: the file renders as its lines, apart from the prompt", async () => {
  const store = await openStore(":memory:");
  try {
    const session = await store.createSession({ cwd: "/work" });
    // As crow run stores it: the prompt and the inlined file in one string.
    const content = "summarize @notes.md please\n\nFile /work/notes.md:\n1→line one\n2→- line two";
    await store.appendMessages(session.id, [{ message: { role: "user", content } }]);
    const page = String((await timelinePage(store, session.id, 0)).html);
    assert.match(page, /<div class="md"><p>summarize @notes\.md please<\/p>\n<\/div>/);
    assert.match(
      page,
      /<details class="attachment" open><summary>File \/work\/notes\.md<\/summary><pre>1→line one\n2→- line two<\/pre><\/details>/,
    );
    assert.doesNotMatch(page, /<p>summarize[^<]*File/);
  } finally {
    await store.close();
  }
});
