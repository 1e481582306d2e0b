import { html } from 'hono/html';
import { valueLine } from '../model/values-shown.ts';
import { CELL_WORDS } from './fleet-page.ts';
import { layout } from './layout.ts';
import { cellOf } from './matrix.ts';
import { previewLines } from './preview-lines.ts';
import type { NodeShown } from './source.ts';
import { actedSince, surveyedWhen, surveyForm } from './survey-parts.ts';

/**
 * A node: its newest survey as the command line shows a preview, each file's whole diff in
 * colour (the command masks secrets as `[secret NAME]`), its values and where each came
 * from, its digest, the command to act on it, and the button to survey it again.
 */
export function nodePage(node: string, shown: NodeShown, berth: string, pageToken: string) {
  const { survey } = shown;
  const form = surveyForm(
    {
      token: pageToken,
      now: shown.now,
      ...(shown.surveying ? { surveying: shown.surveying } : {}),
    },
    node,
  );
  const values =
    shown.values.length > 0
      ? html`<section aria-labelledby="values-heading">
<h2 id="values-heading">Values</h2>
<ul class="values">${shown.values.map((item) => html`<li><code>${valueLine(item)}</code></li>`)}</ul>
</section>`
      : '';
  if (!survey)
    return layout(
      node,
      'node',
      html`<h1>${node}</h1>
<p class="lede">${node} has not been surveyed yet: no preview of it is kept. Survey it to see what <code>berth converge ${node}</code> would do.</p>
${form}
${values}`,
    );
  const { report, refused } = survey;
  const digest = report.digest;
  const blocked = report.blockers.length > 0;
  const nothing = report.steps.length === 0 && !blocked;
  const command = `${berth} converge ${node} --yes --digest ${digest ?? ''}`;
  const main = html`<h1>${node}</h1>
<p class="lede">Surveyed ${surveyedWhen(survey, shown.now)}: what <code>berth converge ${node}</code> would do then.</p>
${actedSince(shown)}
${form}
${
  shown.modules.modules.length > 0
    ? html`<ul class="modules" aria-label="Modules">${shown.modules.modules.map((module) => {
        // A preview refused as a whole says nothing of each module.
        const cell =
          refused === undefined
            ? cellOf(module, report, shown.modules)
            : ({ kind: 'refused', words: refused } as const);
        return html`<li class="cell ${cell.kind}"><span class="name">${module}</span> <span class="mark">${CELL_WORDS[cell.kind]}</span></li>`;
      })}</ul>`
    : ''
}
${values}
<section aria-labelledby="act-heading">
<h2 id="act-heading">To act on it</h2>
${
  refused !== undefined
    ? html`<p class="refusal">${refused} <small>(${report.code ?? 'failed'})</small></p>`
    : blocked
      ? html`<p>The act is refused while a blocker stands: see the preview below.</p>`
      : nothing
        ? html`<p>${node} was as assigned: nothing to do.</p>`
        : html`<p>Run this where berth runs, to act on exactly this preview (a change since refuses it):</p>
<pre class="command"><code>${command}</code></pre>`
}
${digest === undefined || refused !== undefined ? '' : html`<p>Digest <code class="digest">${digest}</code></p>`}
</section>
${
  survey.said === ''
    ? ''
    : html`<section aria-labelledby="preview-heading">
<h2 id="preview-heading">Preview</h2>
<pre class="preview"><code>${previewLines(survey.said).map(
        ({ kind, text }) => html`<span class="${kind}">${text}</span>\n`,
      )}</code></pre>
</section>`
}`;
  return layout(node, 'node', main);
}
