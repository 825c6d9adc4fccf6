// Qwen Code 0.24.4 (`qwen -p`) against our MCP server: what its model received.
import { qwen } from "./harness/clients/qwen.ts";
import { clientSuite } from "./harness/suite.ts";

clientSuite(qwen, { bin: "qwen", cut: true, modern: { quickBytes: 140 } });
