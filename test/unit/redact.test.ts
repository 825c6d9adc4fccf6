import { describe, expect, test } from "bun:test";
import {
  REDACTED,
  Redactor,
  redactThenTail,
  StreamRedactor,
  shapeRedactor,
} from "../../src/core/util/redact.ts";

const r = (text: string): string => shapeRedactor.redact(text);

describe("secret values", () => {
  test("redacts every occurrence of each value, longest first", () => {
    const red = new Redactor(["hunter2-pass", "hunter2-pass-extended"]);
    expect(red.redact("a=hunter2-pass b=hunter2-pass-extended c=hunter2-pass")).toBe(
      `a=${REDACTED} b=${REDACTED} c=${REDACTED}`,
    );
  });

  test("treats regex metacharacters in values literally", () => {
    const red = new Redactor(["p4$$.w(r)d*"]);
    expect(red.redact("pw p4$$.w(r)d* and p4$$xw(r)d")).toBe(`pw ${REDACTED} and p4$$xw(r)d`);
  });

  test("ignores empty and shorter-than-4-character values", () => {
    const red = new Redactor(["", "a", "abc", "abcd"]);
    expect(red.hasSecretValues).toBe(true);
    expect(red.redact("a abc abcd")).toBe(`a abc ${REDACTED}`);
    expect(new Redactor(["", "xy"]).hasSecretValues).toBe(false);
  });

  test("redacts multi-line values", () => {
    const red = new Redactor(["line one\nline two"]);
    expect(red.redact("x line one\nline two y")).toBe(`x ${REDACTED} y`);
  });
});

describe("credential shapes", () => {
  const cases: [string, string, string][] = [
    ["AWS access key id", "key AKIAIOSFODNN7EXAMPLE ok", `key ${REDACTED} ok`],
    ["AWS temporary key id", "ASIAY34FZKBOKMUTVV7A", REDACTED],
    [
      "AWS secret access key by name",
      "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
      `aws_secret_access_key = ${REDACTED}`,
    ],
    ["GitHub personal token", `token ghp_${"a1B2".repeat(9)}`, `token ${REDACTED}`],
    ["GitHub OAuth token", `gho_${"Z9y8".repeat(9)}`, REDACTED],
    ["GitHub user-to-server token", `ghu_${"x".repeat(36)}`, REDACTED],
    ["GitHub server-to-server token", `ghs_${"Q".repeat(36)}`, REDACTED],
    ["GitHub refresh token", `ghr_${"7".repeat(36)}`, REDACTED],
    ["GitHub fine-grained token", `github_pat_11ABCDEFG0_${"k".repeat(59)}`, REDACTED],
    ["GitLab token", "glpat-xxxxXXXXxxxx1234abcd", REDACTED],
    ["Slack bot token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKl", REDACTED],
    ["Slack user token", "xoxp-1234567890-abcdefgh", REDACTED],
    ["OpenAI key", "OPENAI_API_KEY=sk-proj-Abc123def456GHI789jkl0", `OPENAI_API_KEY=${REDACTED}`],
    ["Anthropic key", "sk-ant-api03-AbCdEf0123456789_xyz-QQ", REDACTED],
    ["Google API key", `AIza${"Sy0-_".repeat(7)}`, REDACTED],
    [
      "npm token",
      `//registry.npmjs.org/:_authToken=npm_${"aB3".repeat(12)}`,
      `//registry.npmjs.org/:_authToken=${REDACTED}`,
    ],
    ["bearer header", "Authorization: Bearer eyJhbGciOi.JIUzI1.NiJ9", `Authorization: Bearer ${REDACTED}`],
    ["basic header", "authorization:Basic dXNlcjpwYXNz", `authorization:Basic ${REDACTED}`],
    [
      "header as curl argument",
      "curl -H 'Authorization: token abc123' x",
      `curl -H 'Authorization: token ${REDACTED}' x`,
    ],
    ["header as JSON key", '{"Authorization": "Bearer abc.def"}', `{"Authorization": "Bearer ${REDACTED}"}`],
    ["proxy header", "Proxy-Authorization: Basic Zm9vOmJhcg==", `Proxy-Authorization: Basic ${REDACTED}`],
    [
      "URL password",
      "cloning https://alice:s3cr3t@git.example.com/r.git",
      `cloning https://alice:${REDACTED}@git.example.com/r.git`,
    ],
    ["URL token as password", "postgres://:tok@db:5432/x", `postgres://:${REDACTED}@db:5432/x`],
    ["URL query token", "GET /api?user=bob&token=abc123&x=1", `GET /api?user=bob&token=${REDACTED}&x=1`],
    ["URL query password", "https://h/login?password=pw1#frag", `https://h/login?password=${REDACTED}#frag`],
  ];
  for (const [name, input, expected] of cases) {
    test(`redacts ${name}`, () => expect(r(input)).toBe(expected));
  }

  test("the shapes that ignore case match in any case, one after another in one text", () => {
    const key = "A".repeat(40);
    const text = `AWS_SECRET_ACCESS_KEY=${key} PROXY-AUTHORIZATION: Bearer abc HTTPS://u:pw@h/?TOKEN=t1 ghp_${"x".repeat(30)}`;
    expect(r(text)).toBe(
      `AWS_SECRET_ACCESS_KEY=${REDACTED} PROXY-AUTHORIZATION: Bearer ${REDACTED} HTTPS://u:${REDACTED}@h/?TOKEN=${REDACTED} ${REDACTED}`,
    );
  });
});

describe("near misses stay intact", () => {
  const untouched: [string, string][] = [
    ["short AKIA string", "AKIA1234"],
    ["AKIA inside a longer word", "XAKIAIOSFODNN7EXAMPLEX"],
    ["gh prefix without a token", "ghp_short and ghx_abcdefghijklmnopqrstuvwxyz0123456789"],
    ["sk- words without digits", "sk-learn-is-a-python-library-name"],
    ["sk inside a word", "risk-0123456789abcdefghijklmnop"],
    ["short sk- value", "sk-abc123"],
    ["AIza too short", "AIzaShort"],
    ["npm_ too short", "npm_install_step"],
    ["Slack-like without a token", "xoxb- nothing"],
    ["authorization prose", "Authorization failed for user bob"],
    ["URL with a port", "https://example.com:8443/path@v2"],
    ["URL with a user only", "ssh://git@github.com/org/repo"],
    ["query with harmless names", "https://h/x?tokens_used=5&page=2"],
    ["a URL mention of a header", "see https://example.com/docs#authorization"],
  ];
  for (const [name, input] of untouched) {
    test(name, () => expect(r(input)).toBe(input));
  }
});

describe("private key blocks", () => {
  const body = ["MIIEowIBAAKCAQEA0Z3VS5JJcds3xfn/ygWyF8PbnGy0AHB7MhgHcTz6sE2I2yPB", "aGVsbG8gd29ybGQ=", ""];
  const pem = (kind: string) =>
    [`-----BEGIN ${kind}PRIVATE KEY-----`, ...body.slice(0, 2), `-----END ${kind}PRIVATE KEY-----`].join(
      "\n",
    );

  test("redacts the body and keeps the markers", () => {
    for (const kind of ["", "RSA ", "EC ", "OPENSSH ", "ENCRYPTED "]) {
      expect(r(`before\n${pem(kind)}\nafter`)).toBe(
        `before\n-----BEGIN ${kind}PRIVATE KEY-----\n${REDACTED}\n-----END ${kind}PRIVATE KEY-----\nafter`,
      );
    }
  });

  test("redacts encrypted blocks with armour headers and CRLF line ends", () => {
    const text = [
      "-----BEGIN RSA PRIVATE KEY-----",
      "Proc-Type: 4,ENCRYPTED",
      "DEK-Info: AES-128-CBC,0123456789ABCDEF",
      "",
      body[0],
      "-----END RSA PRIVATE KEY-----",
    ].join("\r\n");
    expect(r(text)).toBe(`-----BEGIN RSA PRIVATE KEY-----\r\n${REDACTED}\r\n-----END RSA PRIVATE KEY-----`);
  });

  test("redacts a JSON-escaped key on one line", () => {
    const json = `{"private_key":"-----BEGIN PRIVATE KEY-----\\n${body[0]}\\n${body[1]}\\n-----END PRIVATE KEY-----\\n"}`;
    expect(r(json)).toBe(
      `{"private_key":"-----BEGIN PRIVATE KEY-----\\n${REDACTED}\\n-----END PRIVATE KEY-----\\n"}`,
    );
  });

  test("a block cut off at the end is redacted to the end", () => {
    expect(r(`-----BEGIN RSA PRIVATE KEY-----\n${body[0]}\n${body[1]?.slice(0, 5)}`)).toBe(
      `-----BEGIN RSA PRIVATE KEY-----\n${REDACTED}`,
    );
  });

  test("a block cut off at the start is redacted back to the start", () => {
    expect(r(`${body[0]?.slice(30)}\n${body[1]}\n-----END RSA PRIVATE KEY-----\nnext`)).toBe(
      `${REDACTED}\n-----END RSA PRIVATE KEY-----\nnext`,
    );
  });

  test("a marker mentioned in a command redacts nothing after it", () => {
    const text = 'grep -l "-----BEGIN RSA PRIVATE KEY-----" *.pem\nfound 2 files\n';
    expect(r(text)).toBe(text);
  });

  test("two blocks in one text are both redacted", () => {
    expect(r(`${pem("")}\nmiddle line\n${pem("EC ")}`)).toBe(
      `-----BEGIN PRIVATE KEY-----\n${REDACTED}\n-----END PRIVATE KEY-----\nmiddle line\n` +
        `-----BEGIN EC PRIVATE KEY-----\n${REDACTED}\n-----END EC PRIVATE KEY-----`,
    );
  });
});

describe("cut boundaries", () => {
  const secret = "correct-horse-battery-staple";
  const red = new Redactor([secret]);

  test("a leading fragment of a secret is redacted when the text starts mid-stream", () => {
    expect(red.redact("battery-staple rest", { startsMidStream: true })).toBe(`${REDACTED} rest`);
    expect(red.redact("battery-staple rest")).toBe("battery-staple rest");
  });

  test("a trailing fragment of a secret is redacted when the text ends mid-stream", () => {
    expect(red.redact("log: correct-horse", { endsMidStream: true })).toBe(`log: ${REDACTED}`);
  });

  test("fragments shorter than four characters are left alone", () => {
    expect(red.redact("ple rest", { startsMidStream: true })).toBe("ple rest");
  });

  test("redactThenTail redacts before cutting, so a secret across the cut never leaks a piece", () => {
    const text = `${"x".repeat(50)}\nkey=${secret} end\n`;
    for (let max = 1; max <= 60; max++) {
      const { text: tail, truncated } = redactThenTail(red, text, max);
      expect(truncated).toBe(true);
      for (let len = 4; len <= secret.length; len++) {
        expect(tail.includes(secret.slice(secret.length - len))).toBe(false);
      }
    }
  });
});

describe("large input", () => {
  test("1 MB of adversarial text finishes", () => {
    const chunks = [
      "a.".repeat(50_000),
      "https://".repeat(10_000),
      "A".repeat(200_000),
      "-----BEGIN PRIVATE KEY-----\n",
      `${"QUJD".repeat(16)}\n`.repeat(4_000),
      "sk-".repeat(20_000),
      "Authorization: ".repeat(5_000),
      "-----END PRIVATE KEY-----\n".repeat(2_000),
      "x ".repeat(100_000),
    ];
    const text = chunks.join("");
    expect(text.length).toBeGreaterThan(1_000_000);
    const red = new Redactor(["supersecretvalue", "another-secret"]);
    const out = red.redact(text, { startsMidStream: true, endsMidStream: true });
    expect(out.length).toBeGreaterThan(0);
    expect(out).toContain(REDACTED);
  });
});

describe("secrets as cleaned", () => {
  test("a secret with CRLF, an escape sequence or a control character matches as output cleaning leaves it", () => {
    const red = new Redactor(["Ab3\r\nXy9KqLm7Pz", "Qw5\x1b[1mEr7Ty8Ui", "Zx\x01Cv8Bn7Mm"]);
    expect(red.redact("Ab3\nXy9KqLm7Pz")).toBe(REDACTED);
    expect(red.redact("Qw5Er7Ty8Ui")).toBe(REDACTED);
    expect(red.redact("ZxCv8Bn7Mm")).toBe(REDACTED);
    expect(red.redact("Ab3\r\nXy9KqLm7Pz")).toBe(REDACTED);
  });

  test("each line of a multi-line secret is matched alone (logs are redacted line by line)", () => {
    const red = new Redactor(["first-line\nsecond-line"]);
    expect(red.redact("second-line")).toBe(REDACTED);
  });
});

describe("StreamRedactor", () => {
  const secret = "Zq7vKp2XwR9tLm4NbY6hJc3DfG";
  const feed = (chunks: string[], gapAt = -1): string => {
    const s = new StreamRedactor(new Redactor([secret]));
    return chunks.map((c, i) => s.push(c, i === gapAt)).join("") + s.end();
  };

  test("a secret split across chunks at every position is redacted whole", () => {
    const text = `before ${secret} after\n`;
    for (let cut = 1; cut < text.length; cut++) {
      expect(feed([text.slice(0, cut), text.slice(cut)])).toBe(`before ${REDACTED} after\n`);
    }
  });

  test("one character at a time, and several secrets in a row", () => {
    const text = `${secret}${secret} x ${secret}`;
    expect(feed([...text])).toBe(`${REDACTED}${REDACTED} x ${REDACTED}`);
  });

  test("prints what cannot begin a secret at once and holds at most the longest secret less one", () => {
    const s = new StreamRedactor(new Redactor([secret]));
    expect(s.push("x".repeat(100))).toBe("x".repeat(100 - (secret.length - 1)));
    expect(s.end()).toBe("x".repeat(secret.length - 1));
  });

  test("after a gap, the held part ends and the new chunk starts mid-stream", () => {
    expect(feed([`a ${secret.slice(0, 10)}`, `${secret.slice(16)} b`], 1)).toBe(`a ${REDACTED}${REDACTED} b`);
  });
});
