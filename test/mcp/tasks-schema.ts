// Validates Tasks-extension messages against the extension's JSON Schema (test/fixtures/mcp-tasks/schema.json).
import path from "node:path";
import { fromJsonSchema } from "@modelcontextprotocol/server";

const schemaPath = path.join(import.meta.dir, "..", "fixtures", "mcp-tasks", "schema.json");
const root = (await Bun.file(schemaPath).json()) as { $defs: Record<string, unknown> };

/** Issues (empty when valid) of `value` against `#/$defs/<definition>`. */
export async function tasksSchemaIssues(definition: string, value: unknown): Promise<string[]> {
  if (!(definition in root.$defs)) throw new Error(`schema.json has no $defs/${definition}`);
  const schema = fromJsonSchema({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $ref: `#/$defs/${definition}`,
    $defs: root.$defs,
  } as never);
  const outcome = await schema["~standard"].validate(value);
  return "issues" in outcome && outcome.issues
    ? outcome.issues.map((issue) => `${issue.path?.join(".") ?? ""}: ${issue.message}`)
    : [];
}
