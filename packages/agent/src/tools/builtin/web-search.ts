/** crow-mcp's `web_search`: searches the web for `query`. */
import { type ToolProfile, titled } from "./profile.js";

export const webSearchProfile: ToolProfile = { kind: "search", display: (name, args) => titled(name, args) };
