/**
 * An on/off session setting as an ACP config option. ACP has a boolean option type, but an agent may send it only to
 * clients that declared `clientCapabilities.session.configOptions.boolean`; every other client gets the same switch
 * as a two-value select (`on` / `off`), which any client that shows config options can render and set.
 */
import { RequestError, type SessionConfigOption } from "@agentclientprotocol/sdk";

/** The select values of a switch for clients without boolean options. */
export const SWITCH_ON = "on";
export const SWITCH_OFF = "off";

/** A switch's identity and label, as in any config option. */
export interface SwitchInfo {
  id: string;
  name: string;
  description?: string;
}

/** The switch as the client can show it: boolean when `booleans`, else an On/Off select. */
export function switchOption(info: SwitchInfo, on: boolean, booleans: boolean): SessionConfigOption {
  if (booleans) return { ...info, type: "boolean", currentValue: on };
  return {
    ...info,
    type: "select",
    currentValue: on ? SWITCH_ON : SWITCH_OFF,
    options: [
      { value: SWITCH_ON, name: "On" },
      { value: SWITCH_OFF, name: "Off" },
    ],
  };
}

/**
 * The value a client set a switch to: a boolean (`type: "boolean"`) or the select's `on` / `off`. Throws -32602
 * naming the accepted values otherwise.
 */
export function switchValue(name: string, value: unknown): boolean {
  if (typeof value === "boolean") return value;
  if (value === SWITCH_ON) return true;
  if (value === SWITCH_OFF) return false;
  throw RequestError.invalidParams(
    undefined,
    `the ${name} option is true or false (or "${SWITCH_ON}" / "${SWITCH_OFF}"), got ${JSON.stringify(value)}`,
  );
}
