/**
 * The fuller texts of Crow's earlier default (up to the lean default of issue 49), kept so that `crow eval compare`
 * can show on a user's own tasks and model whether the lean default holds its pass rates: the system prompt
 * template, and the built-in tools' descriptions and parameter schemas as models then got them (terminal with its
 * default 30 s soft timeout). Data only; `versions.ts` says how a session selects them.
 */
import type { ToolDefinition } from "../messages.js";

/** The earlier built-in system prompt template (the prompt version `full` adds its marker line before it). */
export const FULL_SYSTEM_PROMPT_BODY = `You are Crow, a coding agent. You work in the user's workspace through tools: you read and edit files, run \
commands in a terminal and, when available, search and fetch the web. You solve the task you are given, carefully and \
completely, and you report back briefly.

Today's date: {{ date }}
Platform: {{ platform }}
Workspace: {{ workspace }}
(the directory the user opened; relative paths in the conversation are relative to it)
{% if additional_directories %}
Additional directories, also part of the workspace (you may read and change files there; use absolute paths):
{{ additional_directories }}
{% endif %}

Directory tree (depth-limited; dependency and build directories and .gitignore'd files are hidden):
{{ display_tree }}

{% if has_agents_md %}
<AGENTS_MD>
The workspace's AGENTS.md: instructions and knowledge the user wants you to follow. It takes precedence over the \
general guidelines below when they disagree.

{{ agents_content }}
</AGENTS_MD>
{% else %}
The workspace has no AGENTS.md.
{% endif %}
{% if skills_hint %}

<SKILLS>
{{ skills_hint }}
</SKILLS>
{% endif %}

<TOOLS>
- Always pass absolute paths to file tools (join the workspace path above with the relative path).
- Read a file before you edit it, and edit the lines you read: an edit whose old text does not match exactly fails.
  Prefer small targeted edits over rewriting whole files; write whole files only when creating them.
- The terminal is persistent: the working directory, environment variables and activated virtualenvs carry over
  between calls. Commands that do not finish in time keep running; check on them instead of starting them again.
  Do not start interactive programs (editors, pagers); use non-interactive flags (\`git --no-pager\`, \`-y\`).
- Run independent tool calls in parallel (several calls in one response) when their results do not depend on each
  other: e.g. reading several files.
- If a tool call fails, read the error and change something before retrying; never repeat an identical failing call.
- For multi-step work (three or more distinct steps, or a request with several parts), keep a plan with the \`todo\`
  tool when it is available: write it before you start, keep one step \`in_progress\`, mark steps \`completed\` as you
  finish them. Skip it for a single simple change, a question or a conversation.
- Use web search for things you do not know (unfamiliar libraries, error messages, current versions) instead of
  guessing, when the tool is available.
</TOOLS>

<WORKING>
- Explore before changing: find the relevant files, read them, understand the conventions of the code base, and
  follow them (style, libraries, test framework, file layout).
- Make the smallest change that solves the task well. Edit files in place; do not create copies such as \`_v2\`,
  \`_fixed\` or \`_backup\`. Do not leave debugging code or stray files behind.
- Verify your work: build, run the tests or the program, and look at the output. Do not claim something works
  without having checked it, and say so when you could not check.
- Do not fake success: no mocks or hard-coded results to make a test pass, no disabled tests.
- When a question only asks for an explanation, answer it without changing files.
- Ask the user when the request is ambiguous in a way that matters, instead of guessing at a large change.
</WORKING>

<SAFETY>
- Never run destructive commands (\`rm -rf\` outside the workspace, \`git reset --hard\`, \`git push --force\`,
  dropping databases) unless the user asked for exactly that.
- Do not commit, push or open pull requests unless asked. When you commit, write a clear message; never \`git revert\`
  or rewrite published history on your own.
- Stop only the processes you started, by PID; never \`pkill -f\` or \`killall\`.
- Do not print or copy secrets (API keys, tokens, .env values) into files, commands or answers.
</SAFETY>

<ANSWERS>
- Be concise. Answer in plain text or light Markdown; use code blocks for code and commands.
- When you are done, say what you changed (files and why) and how you verified it, in a few lines.
- Mention problems you noticed but did not fix.
</ANSWERS>`;

/** The earlier definitions of the built-in tools, by name: description and parameters as they were sent. */
export const FULL_TOOL_DEFINITIONS: ReadonlyMap<string, ToolDefinition["function"]> = new Map(
  (
    [
      {
        name: "read",
        description:
          'Read a file from the local filesystem.\n\n- file_path must be an absolute path.\n- Returns up to 2000 lines starting at line `offset` (1-based), the lines as they are, or, when offset or limit is given, each formatted as "<line number><tab><line>". Use offset and limit to page through long files; the output says which offset to use next.\n- Lines longer than 2000 characters are truncated.\n- PNG, JPEG, GIF and WebP images are returned as images you can look at.\n- Binary files and files over 10 MB are refused; use the terminal (head, grep, xxd) for those.\n- Read a file before editing it, and prefer reading several relevant files at once.',
        parameters: {
          type: "object",
          properties: {
            file_path: {
              type: "string",
              description: "Absolute path of the file to read",
            },
            offset: {
              default: 1,
              description: "1-based line number to start reading from (default 1)",
              type: "integer",
              minimum: 0,
              maximum: 9007199254740991,
            },
            limit: {
              default: 2000,
              description: "Maximum number of lines to read (default 2000)",
              type: "integer",
              minimum: 1,
              maximum: 9007199254740991,
            },
          },
          required: ["file_path"],
          additionalProperties: false,
        },
      },
      {
        name: "write",
        description:
          "Write a whole file to the local filesystem, creating parent directories as needed.\n\n- file_path must be an absolute path. An existing file is replaced entirely (atomically; its permissions are kept). Only regular files are written: a FIFO, device or socket is refused.\n- Prefer the edit tool to change part of an existing file, and read a file before overwriting it.\n- Content is written as UTF-8 exactly as given.",
        parameters: {
          type: "object",
          properties: {
            file_path: {
              type: "string",
              description: "Absolute path of the file to write",
            },
            content: {
              type: "string",
              description: "The full content of the file",
            },
          },
          required: ["file_path", "content"],
          additionalProperties: false,
        },
      },
      {
        name: "edit",
        description:
          "Replace text in a file: the text old_string becomes new_string.\n\n- file_path must be an absolute path. Read the file first so old_string matches its current content.\n- old_string must identify exactly one place: include enough surrounding lines to make it unique, or set replace_all=true to replace every occurrence (e.g. to rename a variable).\n- Copy old_string exactly, including indentation, and without the line-number prefixes the read tool shows. Small differences (indentation, whitespace, extra escaping, a slightly misremembered line between matching first and last lines) are tolerated: the result then names the fuzzy matcher used and shows a diff — check it.\n- new_string replaces the matched text and must differ from old_string. If the match sits at a different indentation than old_string, new_string is re-indented by the same amount.\n- An empty old_string creates a new file containing new_string (parent directories are created); that fails if the file already exists and is not empty.\n- CRLF line endings and a UTF-8 byte-order mark are preserved.",
        parameters: {
          type: "object",
          properties: {
            file_path: {
              type: "string",
              description: "Absolute path of the file to modify",
            },
            old_string: {
              type: "string",
              description: "The text to replace (empty to create a new file)",
            },
            new_string: {
              type: "string",
              description: "The text to replace it with (must differ from old_string)",
            },
            replace_all: {
              default: false,
              description: "Replace every occurrence of old_string (default false)",
              type: "boolean",
            },
          },
          required: ["file_path", "old_string", "new_string"],
          additionalProperties: false,
        },
      },
      {
        name: "terminal",
        description:
          'Run a bash command in a persistent shell (a real terminal) and return its output (stdout and stderr together).\n\n- State persists between calls: it is one bash process per session, so the working directory (cd), environment variables (export), shell variables and functions, and activated virtualenvs (source .venv/bin/activate) carry over to the next call. The shell starts in the workspace directory.\n- A successful command returns its output alone ("(no output)" when it printed nothing); a failed one ends with "[Command failed with exit code N]", and "[Current working directory: …]" appears when the directory changed.\n- Colours and escape codes are removed and progress bars collapsed. Output over 30,000 characters keeps its beginning and end with a note of how much was cut; for big outputs redirect to a file and use grep, head or tail.\n- Multi-line scripts, heredocs and && chains work. Pagers are off (PAGER=cat, GIT_PAGER=cat). Avoid full-screen programs (vim, less, top); use non-interactive flags (-y, --yes, --no-input) where you can.\n- Long-running commands: when a command prints nothing new for 30 seconds, the call returns what it has so far with "[Process still running (soft timeout)]" and the command keeps running. Then call with command "" to keep waiting (you get only output you have not seen yet), is_input=true to type into it, or "C-c" to interrupt it. A new command is refused while the previous one is still running.\n- timeout (seconds): wait up to this long for the command instead of returning after 30 seconds of silence; if it is still running then, it is interrupted (SIGINT, then SIGKILL) and the result says so. Use it for slow builds and tests, and to bound commands that might hang.\n- Servers and watchers: run them in the background with output to a file, e.g. `npm run dev > /tmp/dev.log 2>&1 &`, then read the log; the call returns at once.\n- is_input=true: send the text (followed by Enter) to the running program, e.g. to answer a prompt or drive `python3 -i`; returns the program\'s new output.\n- Special keys as the command: "C-c" (interrupt), "C-z" (suspend), "C-d" (end of input).\n- reset=true kills the shell and everything it started, then starts a fresh one (all state is lost); with a command, runs it in the fresh shell.\n- If the shell exits (e.g. `exit`), the next call starts a new shell and says so.',
        parameters: {
          type: "object",
          properties: {
            command: {
              type: "string",
              description:
                'The bash command to run; "" to keep waiting for a running command; with is_input=true, the text to send to it; or a key: "C-c", "C-z", "C-d"',
            },
            is_input: {
              default: false,
              description: "Send command as input (followed by Enter) to the running program instead of running it",
              type: "boolean",
            },
            timeout: {
              description:
                "Seconds to wait before interrupting the command (SIGINT, then SIGKILL); no limit on silence then",
              anyOf: [
                {
                  type: "number",
                  exclusiveMinimum: 0,
                  maximum: 86400,
                },
                {
                  type: "null",
                },
              ],
            },
            reset: {
              default: false,
              description: "Kill the shell and start a fresh one before running command",
              type: "boolean",
            },
          },
          required: ["command"],
          additionalProperties: false,
        },
      },
      {
        name: "web_search",
        description:
          'Search the web (through a SearXNG metasearch instance) and get titles, URLs and snippets.\n\n- Pass several queries at once in `queries`; they run in parallel. Use 1-5 focused, differently-worded queries rather than one vague one (e.g. ["node 20 fetch redirect manual", "undici redirect: manual location header"]).\n- `limit` caps the results shown per query (default 10).\n- Snippets are short: open the promising URLs with web_fetch to read the actual pages before relying on them.\n- Search when you need current or external information: library docs and versions, error messages, APIs, news.\n- If one query fails its error is shown in place of its results; the other queries are unaffected.',
        parameters: {
          type: "object",
          properties: {
            queries: {
              minItems: 1,
              maxItems: 10,
              type: "array",
              items: {
                type: "string",
                minLength: 1,
              },
              description: "Search queries to run in parallel (1-10)",
            },
            limit: {
              default: 10,
              description: "Maximum number of results per query (default 10)",
              type: "integer",
              minimum: 1,
              maximum: 50,
            },
          },
          required: ["queries"],
          additionalProperties: false,
        },
      },
      {
        name: "web_fetch",
        description:
          "Fetch a URL and return its content as readable Markdown.\n\n- HTML pages are reduced to the main article (navigation, ads and footers removed) and converted to Markdown with headings, lists, tables, code blocks and absolute links.\n- Long content is paged: you get up to `max_length` characters starting at `start_index`; the result says which start_index to use next. Paging through the same URL does not download it again.\n- `raw=true` returns the page's HTML source instead of Markdown (for inspecting markup, scripts or metadata).\n- JSON, plain text and other text types are returned as they are, with their content type; images are returned as images; PDFs and other binary files are described, not dumped.\n- http and https only; redirects are followed. Cloud metadata and link-local addresses are refused; while the session's network is off (sandbox), so are loopback and private addresses (127.0.0.1, localhost, 10.x, 192.168.x…).\n- Use web_search first when you do not know the URL.",
        parameters: {
          type: "object",
          properties: {
            url: {
              type: "string",
              description: "The http:// or https:// URL to fetch",
            },
            max_length: {
              default: 5000,
              description: "Maximum number of characters to return (default 5000)",
              type: "integer",
              minimum: 1,
              maximum: 1000000,
            },
            start_index: {
              default: 0,
              description: "Character offset to start from, for reading the next part of a long page (default 0)",
              type: "integer",
              minimum: 0,
              maximum: 9007199254740991,
            },
            raw: {
              default: false,
              description: "Return the raw HTML instead of Markdown (default false)",
              type: "boolean",
            },
          },
          required: ["url"],
          additionalProperties: false,
        },
      },
      {
        name: "task",
        description:
          "Delegates a subtask to a subagent: a fresh agent with the same tools, working directory and model, but none of this conversation. It works on its own until done and returns only its final answer, so your context stays small.\n\nUse it for independent, well-scoped work whose intermediate steps you do not need to see: researching a question across many files, a mechanical change confined to one area, running a test suite and diagnosing its failures. Several task calls in one message run in parallel; only do that when they touch different files.\n\nDo not use it for a single read, search or command (do that yourself), for steps that depend on each other, or when the work needs context from this conversation that you cannot write down.\n\nThe subagent sees ONLY your prompt: state the goal, the relevant paths and facts you already know, the constraints, and exactly what its answer must contain.",
        parameters: {
          type: "object",
          properties: {
            description: {
              type: "string",
              minLength: 1,
              description: "A short label for the subtask (3-8 words), shown to the user.",
            },
            prompt: {
              type: "string",
              minLength: 1,
              description:
                "The subagent's complete instructions: goal, known facts and paths, constraints, what to report back.",
            },
          },
          required: ["description", "prompt"],
        },
      },
      {
        name: "todo",
        description:
          "Writes your plan for the current task as a checklist the user sees live. Pass the whole list every time: it replaces the previous one.\n\nUse it for multi-step work (three or more distinct steps, or a request with several parts): write the plan before you start, mark exactly the step you are working on `in_progress`, and mark each step `completed` as soon as it is done (not in batches at the end). Add steps you discover, remove ones that no longer apply.\n\nDo not use it for a single, simple step, for answering a question, or for purely conversational requests.",
        parameters: {
          type: "object",
          properties: {
            todos: {
              type: "array",
              items: {
                type: "object",
                properties: {
                  content: {
                    type: "string",
                    minLength: 1,
                    description: "The step, in a short sentence.",
                  },
                  status: {
                    type: "string",
                    enum: ["pending", "in_progress", "completed"],
                  },
                  priority: {
                    type: "string",
                    enum: ["high", "medium", "low"],
                  },
                },
                required: ["content", "status", "priority"],
              },
              description:
                "The WHOLE list, every entry each time (it replaces the previous list). An empty list clears it.",
            },
          },
          required: ["todos"],
        },
      },
    ] as Array<ToolDefinition["function"]>
  ).map((definition) => [definition.name, definition]),
);
