// What a CLI action writes to and reads its environment from (the process's, or a test's).
export interface CliIo {
  stdout: { write(s: string): unknown; isTTY?: boolean };
  stderr: { write(s: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
}
