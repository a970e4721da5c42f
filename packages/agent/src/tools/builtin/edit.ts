/**
 * crow-mcp's `edit`: replaces `old_string` by `new_string` in a file. Its result shows the diff its server returned;
 * through the editor (sandbox off) it edits the editor's buffer.
 */
import path from "node:path";
import { checkReadable, checkWritable } from "@crow/mcp/sandbox";
import { clientEdit, previewClientEdit } from "../client-edit.js";
import { changedFile } from "./change.js";
import { fileLocations, type ToolProfile, titled } from "./profile.js";

export const editProfile: ToolProfile = {
  kind: "edit",
  display: (name, args) => titled(name, args, fileLocations(args)),
  resultDisplay: (args, meta, failed) => changedFile(args, meta, failed),
  change: {
    // An edit reads the buffer too: a hidden file (Crow's provider keys) says so rather than "not writable".
    refusal: (file, policy) => checkReadable(file, policy) ?? checkWritable(file, policy),
    fromArgs(args, cwd) {
      const file = args.file_path ?? args.path;
      if (typeof file !== "string" || file === "") return undefined;
      if (typeof args.old_string !== "string" || typeof args.new_string !== "string") return undefined;
      return { path: path.resolve(cwd, file), oldText: args.old_string || null, newText: args.new_string };
    },
  },
  editor: {
    run: ({ client, args, policy, sandboxOn, onServer }) =>
      client.readTextFile && client.writeTextFile && !sandboxOn
        ? clientEdit(client, args, onServer, policy)
        : undefined,
    propose: ({ client, args, policy, sandboxOn }) =>
      client.readTextFile && client.writeTextFile && !sandboxOn ? previewClientEdit(client, args, policy) : undefined,
  },
};
