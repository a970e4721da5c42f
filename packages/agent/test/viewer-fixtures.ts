/**
 * Sessions for the viewer tests, written through the store API the agent uses: a task with thoughts, an edit, a
 * write, a terminal command, a failed call, an image, hostile Markdown, a compaction and a subagent with a child of
 * its own; and a plain chat in another directory.
 */
import type { MessageInput, Store } from "@crow/core";

/** A 1×1 red PNG. */
export const RED_PIXEL =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/** An image elsewhere (another origin, still on loopback: tests reach nothing else) that must never be loaded. */
export const EXTERNAL_IMAGE = "http://127.0.0.1:9/leak.png?secret=42";

export const HOSTILE =
  'Done. <script>window.__pwned = 1</script> See [the docs](javascript:window.__pwned=2) and <img src=x onerror="window.__pwned=3">.\n\n**Bold** and `code`.' +
  `\n\n![the chart](${EXTERNAL_IMAGE})`;

export interface Fixture {
  task: string;
  child: string;
  grandchild: string;
  chat: string;
  archive: string;
}

const usage = (prompt: number, completion: number) => ({
  promptTokens: prompt,
  completionTokens: completion,
  totalTokens: prompt + completion,
});

const call = (id: string, name: string, args: unknown) => ({
  id,
  type: "function" as const,
  function: { name, arguments: JSON.stringify(args) },
});

export async function populate(store: Store, cwd: string): Promise<Fixture> {
  const prompt = await store.getOrCreatePrompt("system_prompt", "You are Crow, working in {{ workspace }}.");
  const task = await store.createSession({
    cwd,
    title: "Fix the parser bug",
    model: "priced",
    mode: "code",
    promptId: prompt.id,
    promptArgs: { workspace: cwd },
    systemPrompt: `You are Crow, working in ${cwd}.`,
  });
  const before: MessageInput[] = [
    { message: { role: "user", content: "Fix the parser bug in parse.py" } },
    { message: { role: "assistant", content: "Let me look at it first." }, usage: usage(500, 10) },
    { message: { role: "user", content: "Go on, I will send a screenshot" } },
    { message: { role: "assistant", content: "Waiting for it." }, usage: usage(700, 10) },
  ];
  await store.appendMessages(task.id, before);
  const archive = await store.replaceMessages(task.id, [
    { message: { role: "user", content: "Fix the parser bug in parse.py" } },
    { message: { role: "assistant", content: "Summary: looking for the **off-by-one** in parse.py." } },
    {
      message: {
        role: "user",
        content: [
          { type: "text", text: "Here is the screenshot of the failure" },
          { type: "image_url", image_url: { url: RED_PIXEL } },
          { type: "image_url", image_url: { url: EXTERNAL_IMAGE } },
        ],
      },
    },
  ]);
  await store.appendMessages(task.id, [
    {
      message: {
        role: "assistant",
        content: "Let me fix it.",
        reasoning_content: "The bug is probably an off-by-one.",
        tool_calls: [
          call("call_edit", "edit", { file_path: `${cwd}/parse.py`, old_string: "i - 1", new_string: "i + 1" }),
          call("call_write", "write", { file_path: `${cwd}/notes.md`, content: "# Notes\nfixed\n" }),
        ],
      },
      usage: usage(1000, 50),
    },
    { message: { role: "tool", tool_call_id: "call_edit", content: `Edited ${cwd}/parse.py: 1 replacement.` } },
    { message: { role: "tool", tool_call_id: "call_write", content: `Wrote ${cwd}/notes.md (2 lines).` } },
    {
      message: {
        role: "assistant",
        content: null,
        tool_calls: [
          call("call_term", "terminal", { command: "python -m pytest -q" }),
          call("call_bad", "read", { file_path: "/nope.txt" }),
        ],
      },
      usage: usage(1400, 30),
    },
    { message: { role: "tool", tool_call_id: "call_term", content: "....\n4 passed in 0.02s" } },
    { message: { role: "tool", tool_call_id: "call_bad", content: "Error: /nope.txt does not exist." } },
    {
      message: {
        role: "assistant",
        content: "I will ask a subagent.",
        tool_calls: [call("call_task", "task", { prompt: "Describe the image" })],
      },
      usage: usage(600, 40),
    },
  ]);
  const child = await store.createSession({ cwd, title: "Describe the image", parentId: task.id, model: "priced" });
  await store.appendMessages(child.id, [
    { message: { role: "user", content: "Describe the image" } },
    { message: { role: "assistant", content: "A red pixel." }, usage: usage(300, 5) },
  ]);
  const grandchild = await store.createSession({ cwd, title: "Check the colour", parentId: child.id });
  await store.appendMessages(grandchild.id, [{ message: { role: "user", content: "Check the colour" } }]);
  await store.appendMessages(task.id, [
    { message: { role: "tool", tool_call_id: "call_task", content: `A red pixel.\n\n(subagent session ${child.id})` } },
    { message: { role: "assistant", content: HOSTILE }, usage: usage(800, 60) },
  ]);
  const chat = await store.createSession({ cwd: `${cwd}/other`, title: "Explain closures", model: "priced" });
  await store.appendMessages(chat.id, [
    { message: { role: "user", content: "What is a closure?" } },
    { message: { role: "assistant", content: "A function with its environment." }, usage: usage(200, 20) },
  ]);
  return { task: task.id, child: child.id, grandchild: grandchild.id, chat: chat.id, archive };
}

/** The price of the fixtures' model ("priced"): 1 USD per million prompt tokens, 2 per million completion tokens. */
export const PRICES = new Map([["priced", { input: 1, output: 2, currency: "USD" }]]);
