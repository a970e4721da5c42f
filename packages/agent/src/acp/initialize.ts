/** What Crow answers to ACP's `initialize`: its capabilities (only what is implemented) and its custom methods. */
import { type AuthMethod, type InitializeResponse, PROTOCOL_VERSION } from "@agentclientprotocol/sdk";
import type { SessionCapabilities as UnstableSessionCapabilities } from "@agentclientprotocol/sdk/unstable";
// The built-in custom methods, advertised without loading the runtime when no extension is configured.
import { BUILTIN_METHODS } from "@crow/core/methods";
import { VERSION } from "../base/version.js";
import { STEERING_META } from "./steering.js";

/** `fork` is unstable ACP (typed from the SDK's unstable schema; see session-methods.ts); other clients ignore the key. */
const SESSION_CAPABILITIES: UnstableSessionCapabilities = {
  list: {},
  resume: {},
  close: {},
  delete: {},
  fork: {},
  additionalDirectories: {},
};

/** Signing in, when the agent offers it (`crow acp`, see auth.ts): the methods for this client, and `logout`. */
export interface AuthOffer {
  methods: AuthMethod[];
}

/** What `initialize` answers (capabilities only for what is implemented). */
export function initializeResponse(
  customMethods: readonly string[] = BUILTIN_METHODS,
  auth?: AuthOffer,
): InitializeResponse {
  return {
    protocolVersion: PROTOCOL_VERSION,
    agentCapabilities: {
      loadSession: true,
      promptCapabilities: { image: true, audio: false, embeddedContext: true },
      mcpCapabilities: { http: true, sse: true },
      sessionCapabilities: SESSION_CAPABILITIES,
      ...(auth ? { auth: { logout: {} } } : {}),
      _meta: { crow: { version: VERSION, methods: [...customMethods] } },
    },
    authMethods: auth?.methods ?? [],
    agentInfo: { name: "crow", title: "Crow", version: VERSION },
    // The steering extension of the official adapters (`_session/steering`, steering.ts).
    _meta: { ...STEERING_META },
  };
}
