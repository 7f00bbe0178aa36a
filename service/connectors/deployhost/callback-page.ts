/**
 * The small page the user's browser shows after the deploy host redirects to /callback.
 * Plain text only, escaped, with no code, state or token in it; nothing runs (CSP).
 */
export interface CallbackPage {
  status: number;
  title: string;
  message: string;
}

export function renderCallbackPage(page: CallbackPage): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(page.title)}</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;color:#222}h1{font-size:1.3rem}</style>
</head>
<body>
<h1>${escapeHtml(page.title)}</h1>
<p>${escapeHtml(page.message)}</p>
</body>
</html>
`;
}

export const CALLBACK_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  // The URL carries the code: never hand it to another site.
  'Referrer-Policy': 'no-referrer',
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
