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

/** Drops what tools/list need not repeat: `$schema` per tool, `propertyNames: {type: string}`, shared fields' details. */
function compact(json: Json, shared: ReadonlySet<string>, sharedNote: string): Json {
  delete json.$schema;
  for (const [key, prop] of Object.entries((json.properties ?? {}) as Record<string, Json>)) {
    delete prop.propertyNames;
    if (shared.has(key)) {
      // Described in full once (run); here only the JSON type(s) and a pointer there.
      const types = Array.isArray(prop.anyOf) ? (prop.anyOf as Json[]).map((alt) => alt.type) : prop.type;
      for (const field of Object.keys(prop)) delete prop[field];
      prop.type = types;
      prop.description = sharedNote;
    }
  }
  return json;
}

/**
 * A valibot schema the SDK can both list (JSON Schema) and validate with (valibot); the properties in `shared`
 * are described once elsewhere (run's launch arguments), so here they carry only `sharedNote`.
 */
export function withJsonSchema<S extends AnySchema>(
  schema: S,
  shared: ReadonlySet<string> = new Set(),
  sharedNote = "",
): StandardSchemaWithJSON<v.InferInput<S>, v.InferOutput<S>> {
  const std = toStandardJsonSchema(schema) as unknown as {
    "~standard": { jsonSchema: Record<string, unknown> };
  };
  const inner = std["~standard"].jsonSchema as Record<"input" | "output", (opts: unknown) => Json>;
  const jsonSchema = {
    input: (opts: unknown) => compact(inner.input(opts), shared, sharedNote),
    output: (opts: unknown) => compact(inner.output(opts), shared, sharedNote),
  };
  return { ...std, "~standard": { ...std["~standard"], jsonSchema } } as unknown as StandardSchemaWithJSON<
    v.InferInput<S>,
    v.InferOutput<S>
  >;
}
