import assert from "node:assert/strict";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { ELICIT_MCP_SERVER, type MockMessage, reply, textReply } from "@crow/testkit";
import { PtyRun, runCrow, useRunFixture } from "./run-helpers.js";

/** The text of the last tool message of a request the mock got. */
function lastToolText(messages: readonly MockMessage[]): string {
  const tool = messages.findLast((m) => m.role === "tool");
  return typeof tool?.content === "string" ? tool.content : JSON.stringify(tool?.content);
}

describe("crow run: questions to the user (MCP elicitation, ask_user)", { timeout: 120_000 }, () => {
  const fx = useRunFixture();
  const runs: PtyRun[] = [];
  const start = (args: string[]) => {
    const run = new PtyRun(args, fx.env, fx.ws.dir);
    runs.push(run);
    return run;
  };
  after(() => {
    for (const run of runs) run.kill();
  });
  before(async () => {
    // The testkit's MCP server that asks during its tool calls, as a configured server.
    await writeFile(
      path.join(fx.home.dir, "config.yaml"),
      `mcpServers:\n  booking:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(ELICIT_MCP_SERVER)}]\n`,
    );
  });

  test("in a terminal: an MCP server's form is asked field by field and the answers reach the server", async () => {
    fx.mock.script(
      reply().toolCall("book_table", {}),
      textReply("Booked for three.").expect((request) => {
        const text = lastToolText(request.body.messages);
        assert.match(text, /"action":"accept"/);
        assert.match(text, /"content":\{"guests":3,"terrace":true,"dishes":\["soup","cake"\]\}/);
      }),
    );
    const run = start(["book a table"]);
    let seen = await run.waitFor(/Guests \(a number\): $/);
    assert.match(seen, /\? booking: How many guests\?\n {2}\(Ctrl-D declines, Ctrl-C cancels\)\n/);
    let mark = run.mark();
    run.write("three\r");
    await run.waitFor(/type a number\n {2}Guests \(a number\): $/, mark);
    run.write("3\r");
    await run.waitFor(/Name, Enter to skip: $/);
    run.write("\r");
    await run.waitFor(/Terrace \(y\/n\), Enter to skip: $/);
    mark = run.mark();
    run.write("y\r");
    seen = await run.waitFor(/Dishes \(numbers, separated by commas\), Enter to skip: $/, mark);
    assert.match(seen, / {4}1\. soup\n {4}2\. fish\n {4}3\. cake\n/);
    run.write("1, 3\r");
    assert.equal(await run.exited, 0);
    assert.match(run.text, /Booked for three\./);
    fx.mock.assertDone();
  });

  test("in a terminal: a server's URL question shows the address; Enter accepts it, and its completion is told", async () => {
    fx.mock.script(
      reply().toolCall("sign_in", {}),
      textReply("Signed in.").expect((request) => {
        assert.match(lastToolText(request.body.messages), /"action":"accept"/);
      }),
    );
    const run = start(["sign in"]);
    const seen = await run.waitFor(/Enter once you opened it, Ctrl-D to decline: $/);
    assert.match(seen, /\? booking: Sign in to the booking service\n {2}Open: https:\/\/booking\.example\/sign-in\n/);
    run.write("\r");
    assert.equal(await run.exited, 0);
    assert.match(run.text, /The web page you were asked to open reports it is done\./);
    assert.match(run.text, /Signed in\./);
    fx.mock.assertDone();
  });

  test("in a terminal: ask_user is offered, its choices shown, the pick is the tool result", async () => {
    fx.mock.script(
      reply()
        .toolCall("ask_user", { question: "Which database?", choices: ["sqlite", "postgres"] })
        .expect((request) => {
          assert.ok(
            request.body.tools?.some((t) => t.function.name === "ask_user"),
            "ask_user is offered",
          );
        }),
      textReply("Postgres then.").expect((request) => {
        assert.equal(lastToolText(request.body.messages), "The user picked: postgres");
      }),
    );
    const run = start(["set up the database"]);
    const seen = await run.waitFor(/Choice \(1-2\): $/);
    assert.match(seen, /\? Which database\?\n[\s\S]* {4}1\. sqlite\n {4}2\. postgres\n/);
    run.write("2\r");
    assert.equal(await run.exited, 0);
    assert.match(run.text, /Postgres then\./);
    fx.mock.assertDone();
  });

  test("in a terminal: Ctrl-C at a question cancels it and the turn", async () => {
    fx.mock.script(reply().toolCall("ask_user", { question: "Deploy now?" }));
    const run = start(["deploy"]);
    await run.waitFor(/Answer: $/);
    run.write("\x03");
    assert.equal(await run.exited, 130);
    fx.mock.assertDone();
  });

  test("--yes in a terminal: ask_user is not offered and a server's question is declined", async () => {
    fx.mock.script(
      reply()
        .toolCall("book_table", {})
        .expect((request) => {
          const names = request.body.tools?.map((t) => t.function.name) ?? [];
          assert.ok(names.includes("book_table") && !names.includes("ask_user"), names.join(", "));
        }),
      textReply("Could not book.").expect((request) => {
        const text = lastToolText(request.body.messages);
        assert.match(text, /"action":"decline"/);
        assert.match(text, /"crow\/reason":"no one to ask/);
      }),
    );
    const run = start(["--yes", "book a table"]);
    assert.equal(await run.exited, 0);
    assert.doesNotMatch(run.text, /How many guests/);
    fx.mock.assertDone();
  });

  test("without a terminal: the question is declined, the run goes on", async () => {
    fx.mock.script(
      reply().toolCall("book_table", {}),
      textReply("Could not book.").expect((request) => {
        assert.match(lastToolText(request.body.messages), /"action":"decline"/);
      }),
    );
    const result = await runCrow(["book a table"], { env: fx.env, cwd: fx.ws.dir });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Could not book\./);
    fx.mock.assertDone();
  });
});
