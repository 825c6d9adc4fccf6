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

type Json = Record<string, unknown>;

/**
 * Drops what tools/list need not repeat: `$schema` per tool, `propertyNames: {type: string}`, a shared field's schema;
 * and `additionalProperties: false` when the schema is listed open (the server still refuses unknown arguments).
 */
function compact(json: Json, shared: ReadonlySet<string>, open: boolean): Json {
  delete json.$schema;
  if (open) delete json.additionalProperties;
  if (Array.isArray(json.required) && json.required.length === 0) delete json.required;
  for (const [key, prop] of Object.entries((json.properties ?? {}) as Record<string, Json>)) {
    delete prop.propertyNames;
    // Described and constrained once, in run's schema (the tool's description points there); here it is named.
    if (shared.has(key)) for (const field of Object.keys(prop)) delete prop[field];
  }
  return json;
}

/**
 * A valibot schema the SDK can both list (JSON Schema) and validate with (valibot); the properties in `shared`
 * are described once elsewhere (run's launch arguments, which the tool's description points to): here only named.
 * `listedOpen()` is asked at each listing: true lists it without `additionalProperties: false`.
 */
export function withJsonSchema<S extends AnySchema>(
  schema: S,
  shared: ReadonlySet<string> = new Set(),
  listedOpen: () => boolean = () => false,
): StandardSchemaWithJSON<v.InferInput<S>, v.InferOutput<S>> {
  const std = toStandardJsonSchema(schema) as unknown as {
    "~standard": { jsonSchema: Record<string, unknown> };
  };
  const inner = std["~standard"].jsonSchema as Record<"input" | "output", (opts: unknown) => Json>;
  const jsonSchema = {
    input: (opts: unknown) => compact(inner.input(opts), shared, listedOpen()),
    output: (opts: unknown) => compact(inner.output(opts), shared, listedOpen()),
  };
  return { ...std, "~standard": { ...std["~standard"], jsonSchema } } as unknown as StandardSchemaWithJSON<
    v.InferInput<S>,
    v.InferOutput<S>
  >;
}
