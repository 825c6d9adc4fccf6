// Job IDs: `job_` + a ULID (48-bit ms time + 80 random bits, Crockford base32), monotonic within a process.

const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
export const JOB_ID_RE = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;
/** Job IDs of Awaitless 0.8 (`job_` + 12 hex ms time + 10 hex random), answered for jobs imported from it. */
export const JOB_ID_08_RE = /^job_[0-9A-F]{22}$/;
export const CLIENT_REQUEST_ID_RE = /^[A-Za-z0-9._:@/-]{1,200}$/;

let lastTime = -1;
let lastRandom: number[] = [];

function encodeTime(ms: number): string {
  let out = "";
  let t = ms;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[t % 32] + out;
    t = Math.floor(t / 32);
  }
  return out;
}

function freshRandom(): number[] {
  // Web Crypto's generator (the same system source as node:crypto's randomBytes, without loading that module)
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from({ length: 16 }, (_, i) => bytes[i]! % 32);
}

/** Same-millisecond IDs increment the random part so they still sort in creation order. */
function nextRandom(prev: number[]): number[] {
  const next = [...prev];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 31) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return freshRandom();
}

export function newJobId(now: number = Date.now()): string {
  if (now <= lastTime) {
    lastRandom = nextRandom(lastRandom);
    now = lastTime;
  } else {
    lastTime = now;
    lastRandom = freshRandom();
  }
  return "job_" + encodeTime(now) + lastRandom.map((d) => CROCKFORD[d]).join("");
}

export function isJobId(s: string): boolean {
  return JOB_ID_RE.test(s) || JOB_ID_08_RE.test(s);
}

export function formatCursor(seq: number): string {
  return "cmp_" + String(seq).padStart(16, "0");
}

export function parseCursor(cursor: string): number | null {
  const m = /^cmp_(\d{16})$/.exec(cursor);
  return m ? Number(m[1]) : null;
}
