/**
 * crow-mcp's `terminal`: runs a shell command. While the sandbox is on it runs in crow-mcp's confined shell; with it
 * off, in a terminal the editor shows when the editor offers one.
 */
import { clientTerminal } from "../client-terminal.js";
import { type ToolProfile, titled } from "./profile.js";

export const terminalProfile: ToolProfile = {
  kind: "execute",
  display: (name, args) => titled(name, args),
  sandboxed: true,
  editor: {
    // The editor's terminal runs a command as the editor does, unconfined: only when the sandbox is off.
    run: ({ client, args, sandboxOn, cwd, context, terminalTimeoutSeconds }) =>
      client.createTerminal && !sandboxOn
        ? clientTerminal(client.createTerminal.bind(client), args, {
            cwd,
            signal: context.signal,
            onProgress: context.onProgress,
            defaultTimeoutSeconds: terminalTimeoutSeconds,
          })
        : undefined,
  },
};
