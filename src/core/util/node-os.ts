// node:os, loaded when a command first needs it (a host name, the account's home, a signal's number): importing it
// counts the machine's CPUs and cost every command's start about a millisecond.

export function nodeOs(): typeof import("node:os") {
  return require("node:os") as typeof import("node:os");
}
