/** crow-mcp's `web_fetch`: fetches `url`. */
import { type ToolProfile, titled } from "./profile.js";

export const webFetchProfile: ToolProfile = { kind: "fetch", display: (name, args) => titled(name, args) };
