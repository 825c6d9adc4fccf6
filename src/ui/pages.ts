// The dashboard's public answers: the page, its scripts, style and icon (no data, no token needed), and our own
// error page for every refusal and failure (no stack, no source, no paths; the same CSP as every answer).
import appJs from "./assets/app.js.txt" with { type: "text" };
import favicon from "./assets/favicon.svg" with { type: "text" };
import fieldsJs from "./assets/fields.js.txt" with { type: "text" };
import graphJs from "./assets/graph.js.txt" with { type: "text" };
import indexBundle from "./assets/index.html" with { type: "text" };
import logJs from "./assets/log.js.txt" with { type: "text" };
import sessionJs from "./assets/session.js.txt" with { type: "text" };
import styleCss from "./assets/style.css" with { type: "text" };

// bun's types call an .html import a bundle; imported as text it is the file's text.
const indexHtml = indexBundle as unknown as string;

const ASSETS: Record<string, { body: string; type: string }> = {
  "/": { body: indexHtml, type: "text/html" },
  "/index.html": { body: indexHtml, type: "text/html" },
  "/session.js": { body: sessionJs, type: "text/javascript" },
  "/fields.js": { body: fieldsJs, type: "text/javascript" },
  "/app.js": { body: appJs, type: "text/javascript" },
  "/graph.js": { body: graphJs, type: "text/javascript" },
  "/log.js": { body: logJs, type: "text/javascript" },
  "/style.css": { body: styleCss, type: "text/css" },
  "/favicon.svg": { body: favicon, type: "image/svg+xml" },
  // browsers ask for it by this name when a page names no icon (an error page, a JSON answer)
  "/favicon.ico": { body: favicon, type: "image/svg+xml" },
};

function text(body: string, type: string, status = 200): Response {
  return new Response(body, { status, headers: { "content-type": `${type}; charset=utf-8` } });
}

/** The embedded page or asset at `path` (GET), or undefined. */
export function asset(path: string): Response | undefined {
  const a = ASSETS[path];
  return a ? text(a.body, a.type) : undefined;
}

const REASONS: Record<number, string> = {
  400: "Bad request",
  401: "Token needed",
  403: "Refused",
  404: "Not found",
  405: "Method not allowed",
  500: "Internal error",
};

function escapeHtml(s: string): string {
  return s.replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string,
  );
}

/** How much of a message an error answer carries (it may quote what the request sent). */
const MESSAGE_CHARS = 300;

function bounded(message: string): string {
  return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS)}…` : message;
}

/**
 * An error answer: JSON `{error: {code, message}}` for the API (what the page's script reads), else a small HTML
 * page. `message` must hold nothing secret: it is shown without a token.
 */
export function errorAnswer(api: boolean, status: number, code: string, message: string): Response {
  const msg = bounded(message);
  if (api) {
    return new Response(JSON.stringify({ error: { code, message: msg } }), {
      status,
      headers: { "content-type": "application/json; charset=utf-8" },
    });
  }
  const title = REASONS[status] ?? "Error";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Awaitless: ${escapeHtml(title)}</title>
<link rel="stylesheet" href="/style.css">
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
</head>
<body>
<main class="error-page">
<h1>Awaitless dashboard: ${status} ${escapeHtml(title)}</h1>
<p id="error-message">${escapeHtml(msg)}</p>
<p>Open the dashboard with the URL <code>awaitless ui</code> printed.</p>
</main>
</body>
</html>
`;
  return text(html, "text/html", status);
}
