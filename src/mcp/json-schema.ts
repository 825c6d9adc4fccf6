// Valibot → JSON Schema for tool inputs: the small subset our tool schemas use, as a Standard JSON Schema.
import type { StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type * as v from "valibot";

type AnySchema = v.GenericSchema;
type Json = Record<string, unknown>;

interface Node {
  type: string;
  entries?: Record<string, Node>;
  wrapped?: Node;
  item?: Node;
  options?: unknown[];
  key?: Node;
  value?: Node;
  pipe?: Array<{ type: string; kind?: string; requirement?: unknown; description?: string }>;
}

/** JSON Schema (draft 2020-12) for a valibot schema built from object/string/number/boolean/array/record/picklist. */
export function toJsonSchema(schema: AnySchema): Json {
  return convert(schema as unknown as Node);
}

function convert(node: Node): Json {
  const out = base(node);
  for (const action of node.pipe ?? []) {
    switch (action.type) {
      case "description":
        out.description = action.description;
        break;
      case "integer":
        out.type = "integer";
        break;
      case "min_value":
        out.minimum = action.requirement;
        break;
      case "max_value":
        out.maximum = action.requirement;
        break;
      case "min_length":
        out[out.type === "array" ? "minItems" : "minLength"] = action.requirement;
        break;
      case "max_length":
        out[out.type === "array" ? "maxItems" : "maxLength"] = action.requirement;
        break;
      case "regex":
        out.pattern = (action.requirement as RegExp).source;
        break;
    }
  }
  return out;
}

function base(node: Node): Json {
  switch (node.type) {
    case "string":
      return { type: "string" };
    case "number":
      return { type: "number" };
    case "boolean":
      return { type: "boolean" };
    case "array":
      return { type: "array", items: convert(node.item as Node) };
    case "record":
      return { type: "object", additionalProperties: convert(node.value as Node) };
    case "picklist":
      return { type: "string", enum: node.options };
    case "optional":
      return convert(node.wrapped as Node);
    case "object":
    case "strict_object":
    case "loose_object": {
      const properties: Record<string, Json> = {};
      const required: string[] = [];
      for (const [name, entry] of Object.entries(node.entries ?? {})) {
        properties[name] = convert(entry);
        if (entry.type !== "optional") required.push(name);
      }
      const out: Json = { type: "object", properties };
      if (required.length > 0) out.required = required;
      if (node.type === "strict_object") out.additionalProperties = false;
      return out;
    }
    default:
      throw new Error(
        `json-schema: valibot schema type "${node.type}" is not supported; extend json-schema.ts`,
      );
  }
}

/** Wrap a valibot schema so the SDK can both list it (JSON Schema) and validate with it (valibot). */
export function withJsonSchema<S extends AnySchema>(
  schema: S,
): StandardSchemaWithJSON<v.InferInput<S>, v.InferOutput<S>> {
  const json = { $schema: "https://json-schema.org/draft/2020-12/schema", ...toJsonSchema(schema) };
  const standard = schema["~standard"];
  return {
    "~standard": {
      version: 1,
      vendor: "valibot",
      validate: standard.validate as StandardSchemaWithJSON<
        v.InferInput<S>,
        v.InferOutput<S>
      >["~standard"]["validate"],
      jsonSchema: { input: () => json, output: () => json },
    },
  };
}
