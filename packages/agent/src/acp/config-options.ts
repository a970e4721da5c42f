/**
 * A session's selectors as ACP offers them: the session config options (the model, `category: "model"`, and the
 * permission mode, `category: "mode"`: clients that support config options show these instead of the legacy mode
 * picker) and the legacy `modes` state for older clients. Both describe the same session state; every change of mode
 * or model, from either side, is sent as `current_mode_update` and `config_option_update`.
 */
import type { SessionConfigOption, SessionModeState, SessionUpdate } from "@agentclientprotocol/sdk";
import type { PermissionMode } from "@crow/core";
import type { AgentConfig } from "../config/index.js";
import { MODES } from "../session/modes.js";

/** The id of the mode select (the model's is `model`). */
export const MODE_OPTION = "mode";
/** The id of the model select. */
export const MODEL_OPTION = "model";

/** What the selectors show. */
export interface SelectorState {
  mode: PermissionMode;
  model: string | undefined;
}

/** The model select (when models are configured), then the mode select. */
export function configOptions(config: AgentConfig, state: SelectorState): SessionConfigOption[] {
  const options: SessionConfigOption[] = [];
  if (state.model && config.models.length > 0) {
    options.push({
      id: MODEL_OPTION,
      name: "Model",
      category: "model",
      type: "select",
      currentValue: state.model,
      options: config.models.map((m) => ({ value: m.name, name: m.name, description: `${m.id} (${m.provider})` })),
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
  return options;
}

export function modeState(current: PermissionMode): SessionModeState {
  return {
    currentModeId: current,
    availableModes: MODES.map(({ id, name, description }) => ({ id, name, description })),
  };
}

/** The update that tells the client the selectors' new state. */
export function configOptionsUpdate(config: AgentConfig, state: SelectorState): SessionUpdate {
  return { sessionUpdate: "config_option_update", configOptions: configOptions(config, state) };
}

/** A mode by id, or undefined. */
export function findMode(id: unknown): PermissionMode | undefined {
  return MODES.find((m) => m.id === id)?.id;
}
