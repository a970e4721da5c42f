/** crow-mcp's `read`: reads a file (at the `offset` line), through the editor's buffer when the editor offers it. */
import { clientRead } from "../client-fs.js";
import { fileLocations, located, type ToolProfile, titled } from "./profile.js";

/** The file read, at its `offset` line when that is past the first. */
function locations(args: Record<string, unknown>) {
  const offset = args.offset;
  return fileLocations(args, typeof offset === "number" && Number.isInteger(offset) && offset > 1 ? offset : undefined);
}

export const readProfile: ToolProfile = {
  kind: "read",
  display: (name, args) => titled(name, args, locations(args)),
  resultDisplay: (args) => located(locations(args)),
  editor: {
    run: ({ client, args, policy }) => (client.readTextFile ? clientRead(client, args, policy) : undefined),
  },
};
