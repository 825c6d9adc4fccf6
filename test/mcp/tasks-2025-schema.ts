// Validates 2025-11-25 messages against that revision's schema.json (test/fixtures/mcp-tasks-2025-11-25/).
import path from "node:path";
import { fromJsonSchema } from "@modelcontextprotocol/server";

const schemaPath = path.join(import.meta.dir, "..", "fixtures", "mcp-tasks-2025-11-25", "schema.json");
const root = (await Bun.file(schemaPath).json()) as { $defs: Record<string, unknown> };
const compiled = new Map<string, ReturnType<typeof fromJsonSchema>>();

/** Issues (empty when valid) of `value` against `#/$defs/<definition>` of the 2025-11-25 schema. */
export async function schema2025Issues(definition: string, value: unknown): Promise<string[]> {
  if (!(definition in root.$defs)) throw new Error(`schema.json has no $defs/${definition}`);
  let schema = compiled.get(definition);
  if (schema === undefined) {
    schema = fromJsonSchema({
      $schema: "https://json-schema.org/draft/2020-12/schema",
      $ref: `#/$defs/${definition}`,
      $defs: root.$defs,
    } as never);
    compiled.set(definition, schema);
  }
  const outcome = await schema["~standard"].validate(value);
  return "issues" in outcome && outcome.issues
    ? outcome.issues.map((issue) => `${issue.path?.join(".") ?? ""}: ${issue.message}`)
    : [];
}
