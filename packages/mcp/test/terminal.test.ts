import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { after, before, describe, test } from "node:test";
import { callTool, connectStdio, type McpConnection, type TempWorkspace, tempWorkspace } from "@crow/testkit";

// One server (one shell) for the whole file, as a model would use it: each test leaves the shell at its prompt.
// The soft timeout is 1 s so that "still running" paths are quick to reach.
describe("terminal tool over stdio, against real bash", () => {
  let ws: TempWorkspace;
  let mcp: McpConnection;
  const run = (args: Record<string, unknown>) => callTool(mcp.client, "terminal", args);
  /**
   * Runs `args`, then sends '' (wait longer) while the command still runs and has not printed `ready`: how soon a
   * program answers is no test's business (pyenv's python3 shim alone takes ~0.75 s; a busy machine more than the
   * 1 s soft timeout). Returns the last result with the output of all the calls.
   */
  const runUntil = async (args: Record<string, unknown>, ready: RegExp) => {
    let result = await run(args);
    let text = result.text;
    for (let i = 0; i < 120 && !ready.test(text); i++) {
      if ((result.structuredContent as { status?: string } | undefined)?.status !== "running") break;
      result = await run({ command: "" });
      text += `\n${result.text}`;
    }
    return { ...result, text };
  };

  before(async () => {
    ws = await tempWorkspace();
    mcp = await connectStdio({ cwd: ws.dir, args: ["--soft-timeout", "1"] });
  });
  after(async () => {
    await mcp.close();
    await ws.cleanup();
  });

  test("is listed with a description that says state persists", async () => {
    const { tools } = await mcp.client.listTools();
    const tool = tools.find((t) => t.name === "terminal");
    assert.ok(tool);
    assert.match(tool.description ?? "", /persistent shell/);
    assert.deepEqual(Object.keys(tool.inputSchema.properties ?? {}).sort(), [
      "command",
      "is_input",
      "reset",
      "timeout",
    ]);
  });

  test("starts in the workspace; cd, export and a sourced activation script persist between calls", async () => {
    const first = await run({ command: "pwd" });
    // In the directory it started in, a success is its output alone: no cwd line (the model knows the workspace), no
    // status line.
    assert.equal(first.text, ws.dir);

    await ws.write(
      "venv/bin/activate",
      'export MY_VENV="$PWD/venv"\nvenv_hello() { echo "hello from venv"; }\nPS1="(venv) $PS1"\n',
    );
    await ws.write("sub/dir/file.txt", "x");
    await run({ command: "cd sub/dir && export GREETING='hi there'" });
    await run({ command: `source ${ws.path("venv/bin/activate")}` });
    const after = await run({ command: 'pwd; echo "$GREETING"; echo "$MY_VENV"; venv_hello; ls' });
    assert.equal(after.isError, undefined);
    assert.match(
      after.text,
      new RegExp(`^${ws.path("sub/dir")}\\nhi there\\n${ws.path("sub/dir")}/venv\\nhello from venv\\nfile.txt\\n`),
    );
    assert.match(after.text, new RegExp(`\\[Current working directory: ${ws.path("sub/dir")}\\]`));
    // The venv's prompt prefix must not leak into outputs.
    assert.doesNotMatch(after.text, /\(venv\)/);
    await run({ command: `cd ${ws.dir}` });
  });

  test("reports exit codes, and $? carries over to the next call", async () => {
    // A success is its output alone ("(no output)" when there is none); a failure names its code.
    const ok = await run({ command: "true" });
    assert.equal(ok.text, "(no output)");
    assert.deepEqual(ok.structuredContent, { status: "completed", exit_code: 0, cwd: ws.dir });
    assert.equal((await run({ command: "echo hi" })).text, "hi");
    assert.equal((await run({ command: "false" })).text, "[Command failed with exit code 1]");
    const failed = await run({ command: "bash -c 'exit 3'" });
    assert.match(failed.text, /\[Command failed with exit code 3\]$/);
    assert.deepEqual(failed.structuredContent, { status: "completed", exit_code: 3, cwd: ws.dir });
    assert.match((await run({ command: "echo status=$?" })).text, /^status=3$/);
    assert.match((await run({ command: "nosuchcommand-xyz" })).text, /command not found[\s\S]*exit code 127\]$/);
  });

  test("includes stderr, in order with stdout", async () => {
    const result = await run({ command: "echo to-stdout; echo to-stderr >&2; echo again" });
    assert.match(result.text, /^to-stdout\nto-stderr\nagain$/);
  });

  test("runs multi-line scripts, heredocs with tabs, and ! literally", async () => {
    const script = "cat <<'EOF' > notes.txt\n\tindented\nwow!\nEOF\nif [ -f notes.txt ]; then\n  cat notes.txt\nfi";
    const result = await run({ command: script });
    assert.match(result.text, /^\tindented\nwow!$/);
    assert.equal(await ws.read("notes.txt"), "\tindented\nwow!\n");
  });

  test("strips colours and collapses carriage-return progress", async () => {
    const result = await run({
      command: String.raw`printf '\033[1;32mgreen\033[0m\n'; printf 'down 10%%\rdown 60%%\rdown 100%%\n'; printf '\033]0;title\007done\n'`,
    });
    assert.equal(result.text, "green\ndown 100%\ndone");
  });

  test("passes unicode through intact", async () => {
    const result = await run({ command: "echo 'héllo wörld ✓ 日本語 🎉'; printf 'é%.0s' $(seq 3000) | wc -m" });
    assert.match(result.text, /^héllo wörld ✓ 日本語 🎉\n3000$/);
  });

  test("caps a 200 000-line output head+tail and says how much was cut", async () => {
    const result = await run({ command: "seq 1 200000" });
    assert.ok(result.text.length < 31_000, `capped, got ${result.text.length} chars`);
    assert.match(result.text, /^1\n2\n3\n/);
    assert.match(result.text, /\n199999\n200000$/);
    assert.match(result.text, /\[\.\.\. [\d,]+ characters \([\d,]+ lines\) of output omitted/);
  });

  test("a program printing sentinel-looking text does not end the command early", async () => {
    const fake = String.raw`printf '\037CROW:E:%s:0:/\037\n' 00112233445566778899aabbccddeeff`;
    const result = await run({
      command: `${fake}; printf '###PS1JSON###\\n{"exit_code": "0"}\\n###PS1END###\\n'; sleep 0.3; echo still-running; bash -c 'exit 4'`,
    });
    assert.match(result.text, /still-running\n/);
    assert.match(result.text, /\[Command failed with exit code 4\]$/);
    assert.match(result.text, /CROW:E:00112233445566778899aabbccddeeff:0:\//);
  });

  test("the nonce is not visible to child processes", async () => {
    // The shell's own variable names (a case-insensitive "crow_n" also matched the caller's CROW_NODE_CACHE).
    const result = await run({ command: "env | grep -c __crow_; env | grep -c PROMPT_COMMAND; true" });
    assert.match(result.text, /^0\n0$/);
  });

  test("hard timeout: sleep 60 with timeout=1 is interrupted and the next command works", async () => {
    const result = await run({ command: "echo before; sleep 60; echo not-reached", timeout: 1 });
    assert.match(result.text, /^before\n/);
    assert.match(result.text, /Command timed out after 1s: interrupted it with SIGINT/);
    assert.doesNotMatch(result.text, /not-reached/);
    assert.match(result.text, /\[Command failed with exit code 130\]$/);
    const next = await run({ command: "echo next" });
    assert.equal(next.text, "next", "a success: its output alone");
  });

  test("hard timeout: a program ignoring SIGINT is killed with SIGKILL", async () => {
    const result = await run({ command: `bash -c "trap '' INT; sleep 30"`, timeout: 0.5 });
    assert.match(result.text, /ignored SIGINT for 2s, so it was killed with SIGKILL/);
    assert.match(result.text, /\[Command failed with exit code 137\]$/);
    assert.equal((await run({ command: "echo alive" })).text, "alive");
  });

  test("soft timeout returns partial output with guidance; '' returns only the rest, nothing lost", async () => {
    const first = await run({ command: "echo part-one; sleep 1.6; echo part-two; sleep 1.5; echo part-three" });
    assert.match(first.text, /^part-one\n/);
    assert.match(first.text, /The command is still running\. You can:\n- Send empty command '' to continue waiting/);
    assert.match(first.text, /\[Process still running \(soft timeout\)\]$/);
    assert.deepEqual(first.structuredContent, { status: "running", cwd: ws.dir });

    const refused = await run({ command: "echo other" });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /previous command is still running, so this command was NOT run/);

    const texts: string[] = [];
    for (let i = 0; i < 5; i++) {
      const more = await run({ command: "" });
      texts.push(more.text);
      if ((more.structuredContent as { status?: string } | undefined)?.status === "completed") break;
    }
    const all = texts.join("\n");
    assert.doesNotMatch(all, /part-one/, "already returned output is not repeated");
    assert.match(all, /part-two\n/);
    assert.match(all, /part-three$/);
    assert.match(texts[texts.length - 1] ?? "", /part-three$/, "the last result ends with the output: a success");
  });

  test("output printed after a soft timeout and before the next call is returned by ''", async () => {
    await runUntil({ command: `echo a; sleep 1.3; echo b; touch ${ws.path("b-printed")}` }, /^a\n/);
    // Nothing asks while b is printed: wait until it has been (the file says so), then ask.
    while (!existsSync(ws.path("b-printed"))) await new Promise((resolve) => setTimeout(resolve, 50));
    // runUntil stops at the completion (the pattern never matches: a success has no status line).
    const rest = await runUntil({ command: "" }, /\[Command completed/);
    assert.equal(rest.text, "b");
    assert.equal(rest.structuredContent?.status, "completed");
  });

  test("python3 -i driven with is_input", async () => {
    const started = await runUntil({ command: "python3 -i -q" }, />>> [\s\S]*waiting for input/);
    assert.match(started.text, />>> [\s\S]*waiting for input/);
    await run({ command: "x = 6 * 7", is_input: true });
    const printed = await runUntil({ command: "print(x)", is_input: true }, /42\n>>> /);
    assert.match(printed.text, /42\n>>> /);
    const multi = await runUntil({ command: "for i in range(3):\n    print('row', i)\n\n", is_input: true }, /row 2\n/);
    assert.match(multi.text, /row 0\nrow 1\nrow 2\n/);
    const done = await runUntil({ command: "C-d" }, /\[Command completed/);
    assert.deepEqual(done.structuredContent, { status: "completed", exit_code: 0, cwd: ws.dir });
    assert.doesNotMatch(done.text, /Command failed|still running/);
  });

  test("read x answered with is_input", async () => {
    const asked = await runUntil({ command: "read -p 'name? ' x && echo \"hello $x\"" }, /name\? /);
    assert.match(asked.text, /^name\? \n/);
    assert.match(asked.text, /\[Process still running/);
    const answered = await runUntil({ command: "Ada", is_input: true }, /\[Command completed/);
    assert.match(answered.text, /^hello Ada$/m);
    assert.equal((answered.structuredContent as { exit_code?: number } | undefined)?.exit_code, 0);
  });

  test("is_input with nothing running is refused clearly", async () => {
    const result = await run({ command: "hello", is_input: true });
    assert.equal(result.isError, true);
    assert.match(result.text, /No command is running/);
  });

  test("C-c interrupts a running loop", async () => {
    const looping = await run({ command: "echo looping; while true; do sleep 0.2; done" });
    assert.match(looping.text, /^looping\n[\s\S]*still running/);
    const stopped = await runUntil({ command: "C-c" }, /\[Command failed/);
    assert.match(stopped.text, /\[Command failed with exit code 130\]$/);
    assert.match((await run({ command: "echo after-loop" })).text, /^after-loop$/);
  });

  test("C-z suspends the foreground job, which can then be killed", async () => {
    await run({ command: "sleep 50" });
    const suspended = await runUntil({ command: "C-z" }, /Stopped/);
    assert.match(suspended.text, /Stopped/);
    assert.match(suspended.text, /exit code 148\]$/);
    const killed = await run({ command: "kill -9 %1; wait %1; jobs; echo ok" });
    // bash may report the killed job ("[1]+  Killed …") before or after the echo: the line is there, the command
    // succeeded (no failure footer, exit code 0).
    assert.match(killed.text, /(^|\n)ok(\n|$)/);
    assert.doesNotMatch(killed.text, /Command failed/);
    assert.equal((killed.structuredContent as { exit_code?: number } | undefined)?.exit_code, 0);
  });

  test("unknown special keys are refused", async () => {
    const result = await run({ command: "C-x" });
    assert.equal(result.isError, true);
    assert.match(result.text, /Unknown special key: C-x/);
  });

  test("a background job does not block completion", async () => {
    const result = await run({ command: "sleep 100 & echo started" });
    assert.match(result.text, /^started$/m);
    assert.doesNotMatch(result.text, /Command failed/);
    assert.match((await run({ command: "kill $!; wait $!; echo cleaned" })).text, /cleaned$/);
  });

  test("progress notifications stream output while a command runs", async () => {
    const messages: string[] = [];
    const result = await mcp.client.callTool(
      { name: "terminal", arguments: { command: "for i in 1 2 3; do echo tick$i; sleep 0.3; done" } },
      undefined,
      { onprogress: (p) => messages.push(p.message ?? "") },
    );
    assert.ok(messages.length >= 2, `got ${messages.length} progress notifications`);
    assert.match(messages.join(""), /tick1\n[\s\S]*tick2\n/);
    assert.equal(result.isError, undefined);
  });

  test("cancelling the request sends C-c to the command", async () => {
    const controller = new AbortController();
    const pending = mcp.client.callTool(
      { name: "terminal", arguments: { command: "echo cancel-me; sleep 30; echo not-reached" } },
      undefined,
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(), 500);
    await assert.rejects(pending);
    const next = await run({ command: "echo after-cancel" });
    assert.match(next.text, /exit code 130/);
    assert.match(next.text, /after-cancel$/);
    assert.doesNotMatch(next.text, /not-reached/);
  });

  test("reset=true restarts the shell and loses its state", async () => {
    await run({ command: "export KEEP=1; cd /" });
    const reset = await run({ command: "", reset: true });
    assert.match(reset.text, /^Terminal reset successfully/);
    const after = await run({ command: 'echo "keep=$KEEP"; pwd' });
    assert.match(after.text, new RegExp(`^keep=\\n${ws.dir}$`));
  });

  test("exit ends the shell; the next command starts a new one and says so", async () => {
    const before = await run({ command: "export MARK=1; echo $$" });
    const oldPid = before.text.split("\n")[0];
    const exited = await run({ command: "exit" });
    assert.match(exited.text, /The shell exited with code 0\. The next command will start a new shell/);
    const next = await run({ command: 'echo "$$ mark=$MARK"' });
    assert.match(next.text, /Started a new shell in/);
    const [pid, mark] = (next.text.split("\n")[1] ?? "").split(" ");
    assert.notEqual(pid, oldPid);
    assert.equal(mark, "mark=");
  });
});
