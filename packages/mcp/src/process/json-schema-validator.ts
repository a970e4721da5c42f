/**
 * The JSON Schema validator of the MCP SDK's clients and servers, loaded only when a schema is first used.
 *
 * Why: the SDK validates a tool's `structuredContent` against its `outputSchema` (client side) and elicitation
 * answers (server side) with Ajv, and builds an Ajv instance (with ajv-formats) in every Client and Server
 * constructor. Crow's own tools declare no output schema, so that work never served a Crow session, yet it cost every
 * start loading ~185 kB of Ajv and every MCP session (one per agent session, on both sides) ~9 ms building an
 * instance. Here the instance is built on the first validation, and each schema is
 * compiled on its first use. Behaviour is the SDK's `AjvJsonSchemaValidator` (same Ajv options, formats, `$id` reuse and messages).
 *
 * The bundles (scripts/bundle-options.mjs) put this class where the SDK imports its own validator, so the SDK's
 * default is this one; Ajv is then require()d at run time from node_modules (synchronously: validation is sync).
 * The agent's own MCP clients are given it explicitly (it imports it from `@crow/mcp/process`).
 */
import { createRequire } from "node:module";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator as JsonSchemaValidatorProvider,
} from "@modelcontextprotocol/sdk/validation/types.js";

/** The part of an Ajv instance used here. */
interface AjvLike {
  compile(schema: unknown): AjvValidate;
  getSchema(id: string): AjvValidate | undefined;
  errorsText(errors?: unknown): string;
}

type AjvValidate = ((input: unknown) => boolean) & { errors?: unknown };

/** A new Ajv instance with the options and formats the SDK uses (Ajv itself is loaded once per process). */
function createDefaultAjv(): AjvLike {
  const Ajv = createRequire(import.meta.url)("ajv") as { default: new (options: object) => AjvLike };
  const addFormats = createRequire(import.meta.url)("ajv-formats") as { default: (ajv: AjvLike) => void };
  const ajv = new Ajv.default({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

/**
 * Drop-in for the SDK's `AjvJsonSchemaValidator`: same contract, but the Ajv instance is built on the first
 * validation and each schema compiled on its first use. One instance per provider (as in the SDK: one per Client or
 * Server), so two servers' schemas with the same `$id` never meet.
 */
export class LazyJsonSchemaValidator implements JsonSchemaValidatorProvider {
  #ajv: AjvLike | undefined;

  /** `ajv`: an instance to use instead of a default one (the SDK's constructor takes one too). */
  constructor(ajv?: AjvLike) {
    this.#ajv = ajv;
  }

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    let validate: AjvValidate | undefined;
    return (input: unknown) => {
      this.#ajv ??= createDefaultAjv();
      const ajv = this.#ajv;
      validate ??=
        "$id" in schema && typeof schema.$id === "string"
          ? (ajv.getSchema(schema.$id) ?? ajv.compile(schema))
          : ajv.compile(schema);
      if (validate(input)) return { valid: true, data: input as T, errorMessage: undefined };
      return { valid: false, data: undefined, errorMessage: ajv.errorsText(validate.errors) };
    };
  }
}

/** The name the SDK imports its validator by (the bundles substitute this module for the SDK's). */
export { LazyJsonSchemaValidator as AjvJsonSchemaValidator };
