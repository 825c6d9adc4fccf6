// Tool input schemas as tools/list shows them: valibot validates, its official converter advertises JSON Schema.
// The only importer of @valibot/to-json-schema. Draft 2020-12 keeps integer types, bounds, descriptions and
// `additionalProperties: false` from v.strictObject, which is everything clients need.
import type { Tool } from "@modelcontextprotocol/server";
import { toJsonSchema as convert } from "@valibot/to-json-schema";
import type * as v from "valibot";

type Json = Record<string, unknown>;

/** The JSON Schema (draft 2020-12) of a tool's input, as converted. */
export function toJsonSchema(schema: v.GenericSchema): Json {
  return convert(schema, { target: "draft-2020-12", typeMode: "input" }) as Json;
}

/**
 * A tool's input schema as listed: without what tools/list need not repeat (`$schema` per tool, `propertyNames:
 * {type: string}`, an empty `required`); `open` lists it without `additionalProperties: false` (the server still
 * refuses unknown arguments, by name).
 */
export function listedInputSchema(schema: v.GenericSchema, open = false): Tool["inputSchema"] {
  const json: Json = { type: "object", ...toJsonSchema(schema) };
  delete json.$schema;
  if (open) delete json.additionalProperties;
  if (Array.isArray(json.required) && json.required.length === 0) delete json.required;
  for (const prop of Object.values((json.properties ?? {}) as Record<string, Json>))
    delete prop.propertyNames;
  // The converter's JSON Schema of an object schema, which is what the SDK's type says more narrowly.
  return json as Tool["inputSchema"];
}
