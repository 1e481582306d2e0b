import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { layout } from './layout.ts';
import { type Cell, type Row, rowsOf, tally } from './matrix.ts';
import type { FleetSurvey } from './source.ts';
import { durationOf, timeOf } from './words.ts';

/** A cell's kind in words: the words say it, the colour only helps. */
export const CELL_WORDS: Record<Cell['kind'], string> = {
  none: 'not run',
  'in-sync': 'in sync',
  install: 'to install',
  update: 'to update',
  release: 'to release',
  'check-failing': 'check failing',
  blocked: 'blocked',
  refused: 'refused',
};

/** The most lines of steps or words a cell lists. */
const CELL_LINES = 3;

/** The fleet: a matrix of nodes × modules, by group, each cell what the node's preview would do. */
export function fleetPage(survey: FleetSurvey) {
  const columns = [...new Set([...survey.nodes.values()].flatMap((node) => node.modules))].sort();
  const rows = new Map(rowsOf(survey.answer, survey.nodes, columns).map((row) => [row.node, row]));
  const grouped = new Set(Object.values(survey.groups).flat());
  const sections: [string, string[]][] = [
    ...Object.entries(survey.groups).map(([group, nodes]): [string, string[]] => [
      `@${group}`,
      nodes,
    ]),
  ];
  const alone = [...survey.nodes.keys()].filter((node) => !grouped.has(node));
  if (alone.length > 0)
    sections.push([sections.length === 0 ? 'every node' : 'in no group', alone]);
  const counts = tally([...rows.values()]);
  const summary = (Object.keys(CELL_WORDS) as Cell['kind'][])
    .filter((kind) => counts[kind])
    .map((kind) => `${counts[kind]} ${CELL_WORDS[kind]}`)
    .join(', ');
  const main = html`<h1>Fleet</h1>
<p class="lede">Surveyed at <time datetime="${survey.at.toISOString()}">${timeOf(survey.at)}</time>
in ${durationOf(survey.ms)}: what <code>berth converge @all</code> would do, node by node.
${summary === '' ? '' : html`<span class="tally">${summary}.</span>`}</p>
<section aria-labelledby="live-heading" class="live">
<h2 id="live-heading">Live</h2>
<p id="live-state" role="status">Acts on this store, by any berth, are shown here as they happen.</p>
<ol id="live-log" aria-label="Acts as they happen"></ol>
</section>
${
  survey.nodes.size === 0
    ? html`<p>berth.json names no node yet.</p>`
    : html`<div class="matrix" role="region" aria-labelledby="matrix-caption" tabindex="0">
<table>
<caption id="matrix-caption">Nodes × modules, by group</caption>
<thead><tr><th scope="col">Node</th>${columns.map((module) => html`<th scope="col">${module}</th>`)}<th scope="col">Live</th></tr></thead>
${sections.map(
  ([name, nodes]) => html`<tbody>
<tr class="group"><th scope="rowgroup" colspan="${columns.length + 2}">${name}</th></tr>
${nodes.map((node) => rowHtml(rows.get(node), columns))}
</tbody>`,
)}
</table>
</div>`
}`;
  return layout('Fleet', 'fleet', main);
}

function rowHtml(
  row: Row | undefined,
  columns: readonly string[],
): HtmlEscapedString | Promise<HtmlEscapedString> {
  if (!row) return html``;
  return html`<tr>
<th scope="row"><a href="/nodes/${row.node}">${row.node}</a>${row.notes.map((note) => html`<p class="note">${note}</p>`)}</th>
${columns.map((module) => cellHtml(row.cells[module] ?? { kind: 'none' }))}
<td class="now" data-node="${row.node}">—</td>
</tr>`;
}

/** A cell, with its steps or blockers' words; a refused node's words are said once, by its name. */
function cellHtml(cell: Cell) {
  const details = cell.kind === 'blocked' ? cell.words : 'steps' in cell ? cell.steps : [];
  // A cell stays small: its first steps, and how many more the node's page shows.
  const shown =
    details.length > CELL_LINES + 1
      ? [...details.slice(0, CELL_LINES), `and ${details.length - CELL_LINES} more`]
      : details;
  return html`<td class="cell ${cell.kind}"><span class="mark">${CELL_WORDS[cell.kind]}</span>${
    shown.length === 0 ? '' : html`<ul>${shown.map((line) => html`<li>${line}</li>`)}</ul>`
  }</td>`;
}
