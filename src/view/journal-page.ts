import { html } from 'hono/html';
import type { JournalEntry, JournalLine } from '../stores/stores.ts';
import { entryWords } from '../words/journal.ts';
import { layout } from './layout.ts';
import { timeOf } from './words.ts';

/** The most acts one journal page lists: the newest. */
export const JOURNAL_SHOWN = 500;

/** What the journal is filtered by: a node, a module, each a name or nothing. */
export interface JournalFilter {
  node?: string;
  module?: string;
}

/** The journal: the acts, newest first, filtered by node and module: who, what, how it ended. */
export function journalPage(lines: readonly JournalLine[], filter: JournalFilter) {
  const entries: JournalEntry[] = [];
  let unread = 0;
  for (const line of lines) {
    if (!('entry' in line)) {
      unread++;
      continue;
    }
    const { entry } = line;
    if (filter.node && entry.node !== filter.node) continue;
    if (filter.module && entry.module !== filter.module) continue;
    entries.push(entry);
  }
  entries.reverse();
  const shown = entries.slice(0, JOURNAL_SHOWN);
  const main = html`<h1>Journal</h1>
<form method="get" action="/journal" class="filter" role="search" aria-label="Filter the journal">
<label>Node <input name="node" value="${filter.node ?? ''}" maxlength="63" pattern="[a-z0-9][a-z0-9\\-]{0,62}" autocomplete="off"></label>
<label>Module <input name="module" value="${filter.module ?? ''}" maxlength="63" pattern="[a-z0-9][a-z0-9\\-]{0,62}" autocomplete="off"></label>
<button type="submit">Filter</button>
${filter.node || filter.module ? html`<a href="/journal">Every act</a>` : ''}
</form>
<p class="lede">${entries.length === 0 ? 'No act' : `${entries.length} act${entries.length === 1 ? '' : 's'}`}${
    filter.node || filter.module ? ' of this filter' : ''
  }, newest first${entries.length > shown.length ? `; the newest ${shown.length} are shown` : ''}.${
    unread > 0
      ? ` ${unread} line${unread === 1 ? ' is' : 's are'} not a journal entry (a hand edit): berth log shows where.`
      : ''
  }</p>
${
  shown.length === 0
    ? ''
    : html`<div class="journal" role="region" aria-labelledby="journal-caption" tabindex="0"><table>
<caption id="journal-caption">Acts, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Act</th><th scope="col">Node</th><th scope="col">Module</th><th scope="col">Outcome</th></tr></thead>
<tbody>
${shown.map((entry) => {
  const { said, error } = entryWords(entry);
  return html`<tr>
<td><time datetime="${entry.at}">${timeOf(new Date(entry.at))}</time></td>
<td>${entry.actor} <small>(${entry.via})</small></td>
<td>${entry.act}</td>
<td>${
    // An act of the state itself (its CA) is of no node.
    entry.node
      ? html`<a href="/journal?node=${encodeURIComponent(entry.node)}">${entry.node}</a>`
      : html`<span class="none">the state</span>`
  }</td>
<td>${entry.module ?? ''}</td>
<td class="outcome ${entry.outcome}"><span class="mark">${entry.outcome}</span>${
    error ? html`<p>${error}</p>` : ''
  }${said ? html`<details><summary>What it said</summary><pre>${said}</pre></details>` : ''}</td>
</tr>`;
})}
</tbody></table></div>`
}`;
  return layout('Journal', 'journal', main);
}
