import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** The page's place in the view, for the navigation's `aria-current`. */
export type Place = 'fleet' | 'journal' | 'node' | 'none';

/**
 * Every page of the view: its landmarks (banner, navigation, main), the style sheet and
 * the live script, both served by the view itself (nothing is fetched from elsewhere).
 */
export function layout(
  title: string,
  place: Place,
  main: HtmlEscapedString | Promise<HtmlEscapedString>,
): HtmlEscapedString | Promise<HtmlEscapedString> {
  const current = (here: Place) => (here === place ? html` aria-current="page"` : '');
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>${title} · berth view</title>
<link rel="stylesheet" href="/view.css">
<script src="/live.js" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to the page</a>
<header>
<p class="brand">berth view</p>
<nav aria-label="Pages">
<ul>
<li><a href="/"${current('fleet')}>Fleet</a></li>
<li><a href="/journal"${current('journal')}>Journal</a></li>
</ul>
</nav>
</header>
<main id="main">
${main}
</main>
</body>
</html>`;
}
