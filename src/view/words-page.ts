import { html } from 'hono/html';
import { layout } from './layout.ts';

/** A page of words: why the view cannot show what was asked, and what to do. */
export function wordsPage(title: string, words: string, next?: string) {
  return layout(
    title,
    'none',
    html`<h1>${title}</h1>
<p class="words">${words}</p>
${next === undefined ? '' : html`<p>${next}</p>`}`,
  );
}

/**
 * A refusal to someone without the view's token: words alone, no style sheet or script
 * (they would be refused too), nothing of the fleet.
 */
export function refusalPage(title: string, words: string) {
  return html`<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="color-scheme" content="light dark"><title>${title} · berth view</title></head>
<body><main><h1>${title}</h1><p>${words}</p></main></body>
</html>`;
}
