// Gemini CLI 0.61.0 (`gemini -p`) against our MCP server: what its model received.
import { gemini } from "./harness/clients/gemini.ts";
import { clientSuite } from "./harness/suite.ts";

clientSuite(gemini, { bin: "gemini", injects: { name: "wait_for_previous", value: true }, cut: true });
