/** The message of a thrown value (one definition, in @crow/util, which core and crow-mcp share). */
export { errorText } from "@crow/util";
