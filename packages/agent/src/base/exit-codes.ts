/**
 * The exit codes of every `crow` command, one table: `crow --help` and `crow run --help` print it, docs/cli.md repeats it
 * (a test compares them).
 */
export const EXIT_CODES_HELP = `Exit codes (every command):
  0    done
  1    failed (provider, agent, store), or nothing done because you said no
  2    bad usage or setup: arguments, configuration, an unknown session id, a store Crow cannot open
       (not writable, no SQLite driver)
  3    stopped early (token or step limit, refusal)
  130  a running turn cancelled with Ctrl-C (quitting an idle REPL is 0)`;

/** A bad command line (exit code 2): the message says what was wrong; the command points to its --help. */
export class UsageError extends Error {}
