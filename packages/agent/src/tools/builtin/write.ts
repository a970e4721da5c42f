/**
 * crow-mcp's `write`: creates or replaces a file. Its result shows the diff its server returned; through the editor
 * (sandbox off) the editor applies it.
 */
import path from "node:path";
import { checkWritable } from "@crow/mcp/sandbox";
import { clientWrite, previewClientWrite } from "../client-fs.js";
import { changedFile } from "./change.js";
import { fileLocations, type ToolProfile, titled } from "./profile.js";

export const writeProfile: ToolProfile = {
  kind: "edit",
  display: (name, args) => titled(name, args, fileLocations(args)),
  resultDisplay: (args, meta, failed) => changedFile(args, meta, failed),
  change: {
    refusal: (file, policy) => checkWritable(file, policy),
    fromArgs(args, cwd) {
      const file = args.file_path ?? args.path;
      if (typeof file !== "string" || file === "" || typeof args.content !== "string") return undefined;
      return { path: path.resolve(cwd, file), newText: args.content };
    },
  },
  editor: {
    run: ({ client, args, sandboxOn }) => (client.writeTextFile && !sandboxOn ? clientWrite(client, args) : undefined),
    propose: ({ client, args, sandboxOn }) => (sandboxOn ? undefined : previewClientWrite(client, args)),
  },
};
