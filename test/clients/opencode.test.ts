// opencode 1.18.33 (`opencode run`) against our MCP server: what its model received.
import { opencode } from "./harness/clients/opencode.ts";
import { clientSuite } from "./harness/suite.ts";

clientSuite(opencode, { bin: "opencode", cut: true });
