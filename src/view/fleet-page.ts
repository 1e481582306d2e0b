import { html } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';
import { layout } from './layout.ts';
import { type Cell, type Row, rowsOf, tally } from './matrix.ts';
import type { FleetShown } from './source.ts';
import { actedSince, surveyedWhen, surveyForm } from './survey-parts.ts';

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
  unsurveyed: 'not surveyed',
};

/** The most lines of steps or words a cell lists. */
const CELL_LINES = 3;

/**
 * The fleet: a matrix of nodes × modules, by group, each cell what the node's newest survey
 * (its converge preview, by any berth) says a converge would do, with the survey's age.
 */
export function fleetPage(shown: FleetShown, pageToken: string) {
  const columns = [...new Set([...shown.nodes.values()].flatMap((node) => node.modules))].sort();
  const rows = new Map(rowsOf(shown.surveyed, shown.nodes, columns).map((row) => [row.node, row]));
  const grouped = new Set(Object.values(shown.groups).flat());
  const sections: [string, string[]][] = [
    ...Object.entries(shown.groups).map(([group, nodes]): [string, string[]] => [
      `@${group}`,
      nodes,
    ]),
  ];
  const alone = [...shown.nodes.keys()].filter((node) => !grouped.has(node));
  if (alone.length > 0)
    sections.push([sections.length === 0 ? 'every node' : 'in no group', alone]);
  const counts = tally([...rows.values()]);
  const summary = (Object.keys(CELL_WORDS) as Cell['kind'][])
    .filter((kind) => counts[kind])
    .map((kind) => `${counts[kind]} ${CELL_WORDS[kind]}`)
    .join(', ');
  const main = html`<h1>Fleet</h1>
<p class="lede">What <code>berth converge @all</code> would do, node by node, as each node was last surveyed (by any berth: a preview is a survey).
${summary === '' ? '' : html`<span class="tally">${summary}.</span>`}</p>
${surveyForm({ token: pageToken, now: shown.now, ...(shown.surveying ? { surveying: shown.surveying } : {}) })}
<section aria-labelledby="live-heading" class="live">
<h2 id="live-heading">Live</h2>
<p id="live-state" role="status">Acts on this store, by any berth, are shown here as they happen.</p>
<ol id="live-log" aria-label="Acts as they happen"></ol>
</section>
${
  shown.nodes.size === 0
    ? html`<p>berth.json names no node yet.</p>`
    : html`<div class="matrix" role="region" aria-labelledby="matrix-caption" tabindex="0">
<table>
<caption id="matrix-caption">Nodes × modules, by group</caption>
<thead><tr><th scope="col">Node</th>${columns.map((module) => html`<th scope="col">${module}</th>`)}<th scope="col">Surveyed</th><th scope="col">Live</th></tr></thead>
${sections.map(
  ([name, nodes]) => html`<tbody>
<tr class="group"><th scope="rowgroup" colspan="${columns.length + 3}">${name}</th></tr>
${nodes.map((node) => rowHtml(rows.get(node), columns, shown.now))}
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
  now: Date,
): HtmlEscapedString | Promise<HtmlEscapedString> {
  if (!row) return html``;
  return html`<tr>
<th scope="row"><a href="/nodes/${row.node}">${row.node}</a>${row.notes.map((note) => html`<p class="note">${note}</p>`)}</th>
${columns.map((module) => cellHtml(row.cells[module] ?? { kind: 'none' }))}
<td class="surveyed">${row.survey ? surveyedWhen(row.survey, now) : 'never'}${actedSince(row)}</td>
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
