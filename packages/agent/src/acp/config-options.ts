/**
 * A session's selectors as ACP offers them: the session config options (the model, `category: "model"`; the
 * thought level, `category: "thought_level"`, for a model configured with `reasoning_effort` levels; the permission
 * mode, `category: "mode"`: clients that support config options show these instead of the legacy mode picker) and
 * the legacy `modes` state for older clients. Both describe the same session state; every change of mode, model or
 * thought level, from either side, is sent as `config_option_update` (and `current_mode_update` for the mode).
 */
import {
  RequestError,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
} from "@agentclientprotocol/sdk";
import type { CrowSession, PermissionMode } from "@crow/core";
import { type AgentConfig, ENV_PROVIDER, findModel, type ModelConfig } from "../config/index.js";
import { MODES } from "../config/modes.js";
import { sandboxOptionDescription, sandboxSwitchable, sessionSandboxOn, setSessionSandbox } from "../tools/sandbox.js";
import { switchOption, switchValue } from "./switch-option.js";
import { configOptionUpdate } from "./translate.js";

/** The id of the mode select (the model's is `model`). */
export const MODE_OPTION = "mode";
/** The id of the model select. */
export const MODEL_OPTION = "model";
/** The id of the thought level select (the request's `reasoning_effort`). */
export const THOUGHT_OPTION = "thought_level";
/** The thought level value that sends no `reasoning_effort` (the provider's own default). */
export const DEFAULT_THOUGHT = "default";

/** The id of the boolean "Sandbox" switch (offered under `sandbox: auto` where bubblewrap works). */
export const SANDBOX_OPTION = "sandbox";

/** What the selectors show. */
export interface SelectorState {
  /** The session's id (its "Sandbox" switch is kept by id). */
  id?: string;
  mode: PermissionMode;
  model: string | undefined;
  /** The session's chosen `reasoning_effort` (shown as the default when the current model does not offer it). */
  reasoningEffort: string | undefined;
}

/** The value that sends no `reasoning_effort` when a model has a level literally named "default". */
export const PROVIDER_THOUGHT = "provider-default";

/** The `reasoning_effort` levels of the session's model (none when it has no `reasoning_effort` configured). */
function thoughtLevels(config: AgentConfig, model: string | undefined): string[] {
  return findModel(config, model)?.reasoningEfforts ?? [];
}

/**
 * The select value that sends no `reasoning_effort`: "default", unless the model has a level of that name (which
 * then is that level, sent as is).
 */
function noEffortValue(levels: readonly string[]): string {
  return levels.includes(DEFAULT_THOUGHT) ? PROVIDER_THOUGHT : DEFAULT_THOUGHT;
}

/**
 * A model's line in the picker: its id and provider; the environment's provider (named "default") by its URL, as
 * "(default)" after every model read as "this is the default one".
 */
function modelDescription(config: AgentConfig, model: ModelConfig): string {
  if (model.provider !== ENV_PROVIDER) return `${model.id} (${model.provider})`;
  const url = config.providers[ENV_PROVIDER]?.baseURL;
  return url ? `${model.id} at ${url}` : model.id;
}

/**
 * The model select (when models are configured), the thought level (when the model has levels), the mode, and the
 * on/off switches (the Sandbox): boolean options for clients that declared `session.configOptions.boolean`, an
 * On/Off select for the others (ACP lets an agent send `type: "boolean"` only to clients that declared it).
 */
export function configOptions(config: AgentConfig, state: SelectorState, booleans = false): SessionConfigOption[] {
  const options: SessionConfigOption[] = [];
  if (state.model && config.models.length > 0) {
    options.push({
      id: MODEL_OPTION,
      name: "Model",
      category: "model",
      type: "select",
      currentValue: state.model,
      options: config.models.map((m) => ({ value: m.name, name: m.name, description: modelDescription(config, m) })),
    });
  }
  const levels = thoughtLevels(config, state.model);
  if (levels.length > 0) {
    const chosen = state.reasoningEffort;
    const none = noEffortValue(levels);
    options.push({
      id: THOUGHT_OPTION,
      name: "Thought level",
      description: "How hard the model reasons before answering (reasoning_effort)",
      category: "thought_level",
      type: "select",
      currentValue: chosen !== undefined && levels.includes(chosen) ? chosen : none,
      options: [
        { value: none, name: "Provider's default", description: "Send no reasoning_effort: the provider decides" },
        ...levels.map((level) => ({ value: level, name: level })),
      ],
    });
  }
  options.push({
    id: MODE_OPTION,
    name: "Mode",
    description: "What tools may do without asking",
    category: "mode",
    type: "select",
    currentValue: state.mode,
    options: MODES.map(({ id, name, description }) => ({ value: id, name, description })),
  });
  if (state.id !== undefined && sandboxSwitchable(config.sandbox)) {
    options.push(
      switchOption(
        {
          id: SANDBOX_OPTION,
          name: "Sandbox",
          description: sandboxOptionDescription(),
        },
        sessionSandboxOn(state.id),
        booleans,
      ),
    );
  }
  return options;
}

/**
 * Applies `session/set_config_option`: the session changes and tells its listeners (the agent sends
 * `config_option_update`, persistence stores it). Throws -32602 for an unknown option or value, naming the valid ones.
 */
export function setConfigOption(config: AgentConfig, session: CrowSession, configId: string, value: unknown): void {
  if (configId === MODE_OPTION) {
    const mode = findMode(value);
    if (!mode) throw RequestError.invalidParams(undefined, `unknown mode "${String(value)}" (code, ask, read-only)`);
    session.setMode(mode);
    return;
  }
  if (configId === MODEL_OPTION && config.models.length > 0) {
    if (typeof value !== "string" || !config.models.some((m) => m.name === value)) {
      const known = config.models.map((m) => m.name).join(", ");
      throw RequestError.invalidParams(undefined, `unknown model "${String(value)}" (${known})`);
    }
    session.setModel(value);
    return;
  }
  if (configId === SANDBOX_OPTION && sandboxSwitchable(config.sandbox)) {
    setSessionSandbox(session.id, switchValue("Sandbox", value));
    return;
  }
  const levels = thoughtLevels(config, session.model);
  if (configId === THOUGHT_OPTION && levels.length > 0) {
    const none = noEffortValue(levels);
    if (value === none) {
      session.setReasoningEffort(undefined);
      return;
    }
    if (typeof value !== "string" || !levels.includes(value)) {
      const known = [none, ...levels].join(", ");
      throw RequestError.invalidParams(undefined, `unknown thought level "${String(value)}" (${known})`);
    }
    session.setReasoningEffort(value);
    return;
  }
  const known = configOptions(config, session, true).map((o) => o.id);
  throw RequestError.invalidParams(undefined, `unknown config option "${configId}" (${known.join(", ")})`);
}

export function modeState(current: PermissionMode): SessionModeState {
  return {
    currentModeId: current,
    availableModes: MODES.map(({ id, name, description }) => ({ id, name, description })),
  };
}

/** The update that tells the client the selectors' new state (`booleans`: see {@link configOptions}). */
export function configOptionsUpdate(config: AgentConfig, state: SelectorState, booleans = false): SessionUpdate {
  return configOptionUpdate(configOptions(config, state, booleans));
}

/** A mode by id, or undefined. */
export function findMode(id: unknown): PermissionMode | undefined {
  return MODES.find((m) => m.id === id)?.id;
}
