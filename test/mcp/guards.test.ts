// The launch guards on their own: every refused and allowed case of issue 14, argv and shell-string forms.
import { describe, expect, test } from "bun:test";
import { refusalFor } from "../../src/mcp/guards.ts";
import { shellCommands } from "../../src/mcp/shell-words.ts";

const sh = (script: string) => ["sh", "-c", script];
const WAIT = /wait_for_job/;

describe("bare waits are refused, wherever they hide", () => {
  test.each([
    [["sleep", "30"]],
    [["/usr/bin/sleep", "1m", "5s"]],
    [sh("sleep 30")],
    [["bash", "-c", " sleep 10; "]],
    [["bash", "-lc", "sleep 30"]],
    [["bash", "-e", "-o", "pipefail", "-c", "sleep 5"]],
    [sh("sleep 60 && cat build.log")],
    [sh("sleep 20; make test")],
    [["env", "FOO=1", "sleep", "30"]],
    [["env", "-i", "PATH=/bin", "sh", "-c", "sleep 9"]],
    [["nohup", "sleep", "300"]],
    [["timeout", "60", "sleep", "50"]],
    [["timeout", "-s", "KILL", "5m", "bash", "-lc", "sleep 100"]],
    [["ssh", "gpu", "sleep", "30"]],
    [["ssh", "-p", "2222", "-o", "BatchMode=yes", "gpu", "sleep 30 && nvidia-smi"]],
    [sh("exec sleep infinity")],
    [sh("FOO=1 sleep 5 >/dev/null 2>&1")],
    [sh("nohup sleep 30 &")],
  ])("%p", (argv) => {
    const r = refusalFor([...argv]);
    expect(r?.message).toMatch(/only sleeps/);
    expect(r?.hint).toMatch(WAIT);
  });
});

describe("commands that never finish are refused with the right move", () => {
  test.each([
    [["watch", "-n", "2", "kubectl", "get", "pods"], /repeats/, /wait_for_job|get_job_logs/],
    [["top"], /runs until it is stopped/, /top","-b"/],
    [["tail", "-f", "log.txt"], /follows/, /get_job_logs/],
    [["tail", "-n", "50", "-F", "log.txt"], /follows/, /get_job_logs/],
    [["tail", "--follow=name", "log.txt"], /follows/, /get_job_logs/],
    [["less", "README.md"], /pager/, /cat/],
    [sh("make 2>&1 | less"), /pager/, /cat/],
    [sh("tail -f out.log | grep ERROR"), /follows/, /get_job_logs/],
    [["python3"], /interactive python3/, /script/],
    [["python", "-u"], /interactive python/, /script/],
    [["python3", "-i", "x.py"], /interactive python3/, /script/],
    [["node"], /interactive node/, /script/],
    [["bash"], /interactive bash/, /-c/],
    [["bash", "-l"], /interactive bash/, /-c/],
    [["env", "TERM=xterm", "top"], /runs until/, /-b/],
    [["ssh", "gpu", "watch", "nvidia-smi"], /repeats/, /wait_for_job/],
    [["nohup", "tail", "-f", "x"], /follows/, /get_job_logs/],
    [sh("while true; do top; done"), /runs until/, /-b/],
  ])("%p", (argv, message, hint) => {
    const r = refusalFor([...argv]);
    expect(r?.message).toMatch(message);
    expect(r?.hint).toMatch(hint);
  });
});

describe("ordinary commands are allowed", () => {
  test.each([
    [["sleep"]],
    [["make", "sleep"]],
    [sh("until curl -fs localhost:8080; do sleep 2; done")],
    [sh("while ! test -f done.flag; do sleep 1; done; cat done.flag")],
    [sh("for i in 1 2 3; do echo $i; sleep 1; done")],
    [sh("if [ -f x ]; then sleep 1; fi")],
    [sh("./server & sleep 2; curl localhost:8080")],
    [sh("make build && sleep 5 && curl localhost")],
    [sh("echo 'sleep 30'")],
    [["bash", "-lc", "make test"]],
    [["bash", "script.sh"]],
    [["bash", "-s"]],
    [["top", "-b", "-n", "1"]],
    [["top", "-bn1"]],
    [["tail", "-n", "100", "log.txt"]],
    [["python3", "train.py"]],
    [["python3", "-c", "print(1)"]],
    [["python", "-m", "pytest"]],
    [["python3", "--version"]],
    [["node", "-e", "1"]],
    [["node", "server.js"]],
    [["env", "FOO=1", "make"]],
    [["timeout", "60", "make", "test"]],
    [["ssh", "gpu", "nvidia-smi"]],
    [["ssh", "gpu"]],
    [sh("echo $(sleep 1; date)")],
    [sh("sleep $DELAY")],
    [sh("echo 'unclosed")],
  ])("%p", (argv) => {
    expect(refusalFor([...argv])).toBeUndefined();
  });
});

describe("the shell reader", () => {
  test("splits on operators, keeps quotes, marks compound commands", () => {
    expect(shellCommands(`a "b c" 'd;e' && f | g; until h; do sleep 2; done`)).toEqual([
      { words: ["a", "b c", "d;e"], inCompound: false },
      { words: ["f"], inCompound: false },
      { words: ["g"], inCompound: false },
      { words: ["h"], inCompound: true },
      { words: ["sleep", "2"], inCompound: true },
    ]);
  });
  test("drops redirections and comments; gives up on open quotes", () => {
    expect(shellCommands("cmd >out 2>&1 # sleep 3\nnext < in")).toEqual([
      { words: ["cmd"], inCompound: false },
      { words: ["next"], inCompound: false },
    ]);
    expect(shellCommands('echo "open')).toBeUndefined();
  });
});
