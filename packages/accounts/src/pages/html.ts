import { createHash } from 'node:crypto';
import escapeHtmlText from 'escape-html';

/** Escapes text for HTML element content and quoted attribute values (`escape-html`: & < > " '). */
export function escapeHtml(value: string): string {
  return escapeHtmlText(value);
}

/** Raw HTML that `html` inserts as is (already escaped or written here). */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

type Part = string | number | Html | Html[] | undefined | null | false;

/** A tagged template that escapes every interpolated value unless it is `Html`. */
export function html(strings: TemplateStringsArray, ...parts: Part[]): Html {
  let out = strings[0] ?? '';
  parts.forEach((part, i) => {
    if (part instanceof Html) out += part.value;
    else if (Array.isArray(part)) out += part.map((p) => p.value).join('');
    else if (part !== undefined && part !== null && part !== false) out += escapeHtml(String(part));
    out += strings[i + 1] ?? '';
  });
  return new Html(out);
}

/**
 * The one stylesheet, inline so that a page is one request; the CSP allows exactly this text by
 * its hash (no 'unsafe-inline', no script at all).
 */
const STYLE = `
:root{color-scheme:light dark;--fg:#1b1b1b;--bg:#fff;--muted:#555;--accent:#0b57d0;--ok:#0a6b2f;--bad:#a4161a;--line:#c8c8c8}
@media (prefers-color-scheme:dark){:root{--fg:#eee;--bg:#121212;--muted:#bbb;--accent:#8ab4f8;--ok:#7bd88f;--bad:#ff8a80;--line:#444}}
*{box-sizing:border-box}
body{margin:0;font:1.05rem/1.55 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
main{max-width:34rem;margin:3rem auto;padding:0 1.25rem}
h1{font-size:1.6rem;line-height:1.25;margin:0 0 1rem}
p{margin:0 0 1rem}
.muted{color:var(--muted)}
.ok{border-left:.3rem solid var(--ok);padding:.25rem 0 .25rem .9rem}
.bad{border-left:.3rem solid var(--bad);padding:.25rem 0 .25rem .9rem}
form{margin:1.5rem 0}
label{display:block;font-weight:600;margin-bottom:.35rem}
input[type=password],input[type=email]{width:100%;font:inherit;padding:.6rem .7rem;border:1px solid var(--line);border-radius:.4rem;background:var(--bg);color:var(--fg)}
button{font:inherit;font-weight:600;padding:.65rem 1.2rem;margin-top:1rem;border:0;border-radius:.4rem;background:var(--accent);color:#fff;cursor:pointer}
@media (prefers-color-scheme:dark){button{color:#111}}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.hint{font-size:.95rem;color:var(--muted);margin-top:.35rem}
`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * The pages' own policy: nothing loads but the inline stylesheet above; forms post only to this
 * origin; no frames, no <base>, no scripts. It replaces the API's `default-src 'none'` for these
 * answers only.
 */
export const PAGE_CSP = ["default-src 'none'", `style-src 'sha256-${STYLE_HASH}'`, "form-action 'self'", "frame-ancestors 'none'", "base-uri 'none'"].join(
  '; ',
);

/** A whole page: language, title, one landmark, one heading. */
export function page(title: string, body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title} · Meal Planner</title>
<style>${new Html(STYLE)}</style>
</head>
<body>
<main>
<h1>${title}</h1>
${body}
</main>
</body>
</html>
`.value;
}

/** A hidden form field. */
export function hidden(name: string, value: string): Html {
  return html`<input type="hidden" name="${name}" value="${value}">`;
}
