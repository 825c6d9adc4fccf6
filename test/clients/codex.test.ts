// Codex 0.169.0 (`codex exec`) against our MCP server: what its model received.
import { codex } from "./harness/clients/codex.ts";
import { clientSuite } from "./harness/suite.ts";

clientSuite(codex, { bin: "codex", cut: true, modern: { quickBytes: 680 } });
