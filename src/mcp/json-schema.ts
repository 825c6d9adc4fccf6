// Tool input schemas as the SDK lists them: valibot validates, its official converter advertises JSON Schema.
// The only importer of @valibot/to-json-schema. Draft 2020-12 keeps integer types, bounds, descriptions and
// `additionalProperties: false` from v.strictObject, which is everything the SDK and clients need.
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import { toJsonSchema as convert, toStandardJsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";

type AnySchema = v.GenericSchema;

/** The JSON Schema (draft 2020-12) a tool's input is advertised with. */
export function toJsonSchema(schema: AnySchema): Record<string, unknown> {
  return convert(schema, { target: "draft-2020-12", typeMode: "input" }) as Record<string, unknown>;
}

/** A valibot schema the SDK can both list (JSON Schema) and validate with (valibot). */
export function withJsonSchema<S extends AnySchema>(
  schema: S,
): StandardSchemaWithJSON<v.InferInput<S>, v.InferOutput<S>> {
  return toStandardJsonSchema(schema) as unknown as StandardSchemaWithJSON<v.InferInput<S>, v.InferOutput<S>>;
}
