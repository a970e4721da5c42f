/**
 * A per-session todo list, showing the other registrations: an in-process tool the model uses (`todo`, with a zod
 * schema from `api.z`), a slash command for the user (`/todos`), and a custom ACP method for the editor
 * (`_todo/list {sessionId}`, advertised in initialize `_meta.crow.methods`). State lives per session (`onSession`),
 * in memory.
 *
 * config.yaml:
 *
 *   extensions:
 *     - /path/to/crow/examples/extensions/todo.mjs
 */

export default (api) => {
  const { z } = api;
  /** sessionId → items. */
  const lists = new Map();

  api.onSession((session) => {
    lists.set(session.id, []);
    return () => lists.delete(session.id);
  });

  const render = (items) =>
    items.length === 0
      ? "The todo list is empty."
      : items.map((item, i) => `${i + 1}. [${item.done ? "x" : " "}] ${item.text}`).join("\n");

  api.registerTool({
    name: "todo",
    description:
      "Keep a todo list for a multi-step task: `add` an item, mark one `done` by number, or `list` them. " +
      "Use it to plan before a long task and tick items off as you finish them.",
    parameters: z.object({
      action: z.enum(["add", "done", "list"]),
      text: z.string().min(1).optional().describe("The item, for add"),
      number: z.int().min(1).optional().describe("The item's number, for done"),
    }),
    // Only touches its own in-memory list: no permission prompt needed in ask mode.
    readOnly: true,
    execute: ({ action, text, number }, { session }) => {
      const items = lists.get(session.id) ?? [];
      if (action === "add") {
        if (!text) throw new Error("add needs a text");
        items.push({ text, done: false });
      } else if (action === "done") {
        const item = items[(number ?? 0) - 1];
        if (!item) throw new Error(`there is no item ${number} (the list has ${items.length})`);
        item.done = true;
      }
      lists.set(session.id, items);
      return render(items);
    },
  });

  api.registerCommand("todos", {
    description: "Show this session's todo list",
    run: (_args, { session }) => render(lists.get(session.id) ?? []),
  });

  api.registerMethod("_todo/list", (params) => {
    const sessionId = params?.sessionId;
    if (typeof sessionId !== "string") throw new Error('expected {"sessionId": "<id>"}');
    const items = lists.get(sessionId);
    if (!items) throw new Error(`no live session ${sessionId}`);
    return { items };
  });
};
