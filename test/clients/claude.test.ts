// Claude Code 2.1.332 (`claude -p`) against our MCP server: what its model received.
import { claude } from "./harness/clients/claude.ts";
import { clientSuite } from "./harness/suite.ts";

clientSuite(claude, { bin: "claude", cut: true, modern: { quickBytes: 640 } });
