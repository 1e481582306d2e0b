import { html } from 'hono/html';
import type { JournalEntry } from '../stores/stores.ts';
import type { Surveying } from './source.ts';
import { ageOf, timeOf } from './words.ts';

/**
 * The one thing a page asks of the view: a new survey of the fleet, or of one node. A
 * form POSTed to `/survey` with the page's token; while a survey of this view is under
 * way, the page says so instead (a second is refused until it ends).
 */
export function surveyForm(
  page: { token: string; now: Date; surveying?: Surveying },
  node?: string,
) {
  const { surveying } = page;
  if (surveying)
    return html`<p class="surveying" role="status">A survey of ${surveying.target} is under way, asked <time datetime="${surveying.since.toISOString()}">${ageOf(surveying.since, page.now)}</time>: reload the page when it ends.</p>`;
  return html`<form class="survey" method="post" action="/survey">
<input type="hidden" name="check" value="${page.token}">
${node === undefined ? '' : html`<input type="hidden" name="node" value="${node}">`}
<button type="submit">Survey ${node ?? 'the fleet'} again</button>
<span class="hint">runs each module's check, as <code>berth converge ${node ?? '@all'}</code> does</span>
</form>`;
}

/** A survey's time and age, and who made it: "3 minutes ago (2026-11-26 14:02:09 UTC) by ann (cli)". */
export function surveyedWhen(survey: { at: string; actor: string; via: string }, now: Date) {
  const at = new Date(survey.at);
  return html`<time datetime="${survey.at}" title="${timeOf(at)}">${ageOf(at, now)}</time> by ${survey.actor} (${survey.via})`;
}

/** The acts on a node since its survey: the survey may no longer say what is there. */
export function actedSince({ since }: { since: readonly JournalEntry[] }) {
  const [newest] = since;
  if (!newest) return '';
  const more = since.length > 1 ? ` (and ${since.length - 1} more)` : '';
  return html`<p class="stale">Acted on since: ${newest.act}${newest.module ? ` ${newest.module}` : ''} by ${newest.actor} (${newest.via}), ${newest.outcome}${more}. Survey again to see it now.</p>`;
}
