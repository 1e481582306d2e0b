import { html } from 'hono/html';
import { valueLine } from '../values-shown.ts';
import { CELL_WORDS } from './fleet-page.ts';
import { layout } from './layout.ts';
import { cellOf } from './matrix.ts';
import { previewLines } from './preview-lines.ts';
import type { NodeSurvey } from './source.ts';
import { timeOf } from './words.ts';

/**
 * A node: its preview as the command line shows it, each file's whole diff in colour
 * (the command masks secrets as `[secret NAME]`), its values and where each came from,
 * its digest, and the command to act on it.
 */
export function nodePage(node: string, survey: NodeSurvey, berth: string) {
  const report = survey.answer.nodes[node];
  const digest = survey.answer.digest;
  const { refused } = survey.answer;
  const blocked = (report?.blockers.length ?? 0) > 0;
  const nothing = report !== undefined && report.steps.length === 0 && !blocked;
  const command = `${berth} converge ${node} --yes --digest ${digest ?? ''}`;
  const main = html`<h1>${node}</h1>
<p class="lede">Previewed at <time datetime="${survey.at.toISOString()}">${timeOf(survey.at)}</time>: what <code>berth converge ${node}</code> would do.</p>
${
  report && survey.modules.modules.length > 0
    ? html`<ul class="modules" aria-label="Modules">${survey.modules.modules.map((module) => {
        // A preview refused as a whole says nothing of each module.
        const cell =
          refused === undefined
            ? cellOf(module, report, survey.modules)
            : ({ kind: 'refused', words: refused } as const);
        return html`<li class="cell ${cell.kind}"><span class="name">${module}</span> <span class="mark">${CELL_WORDS[cell.kind]}</span></li>`;
      })}</ul>`
    : ''
}
${
  survey.values.length > 0
    ? html`<section aria-labelledby="values-heading">
<h2 id="values-heading">Values</h2>
<ul class="values">${survey.values.map((item) => html`<li><code>${valueLine(item)}</code></li>`)}</ul>
</section>`
    : ''
}
<section aria-labelledby="act-heading">
<h2 id="act-heading">To act on it</h2>
${
  refused !== undefined
    ? html`<p class="refusal">${refused} <small>(${survey.answer.code ?? 'failed'})</small></p>`
    : blocked
      ? html`<p>The act is refused while a blocker stands: see the preview below.</p>`
      : nothing
        ? html`<p>${node} is as assigned: nothing to do.</p>`
        : html`<p>Run this where berth runs, to act on exactly this preview (a change since refuses it):</p>
<pre class="command"><code>${command}</code></pre>`
}
${digest === undefined || refused !== undefined ? '' : html`<p>Digest <code class="digest">${digest}</code></p>`}
</section>
${
  survey.answer.said === ''
    ? ''
    : html`<section aria-labelledby="preview-heading">
<h2 id="preview-heading">Preview</h2>
<pre class="preview"><code>${previewLines(survey.answer.said).map(
        ({ kind, text }) => html`<span class="${kind}">${text}</span>\n`,
      )}</code></pre>
</section>`
}`;
  return layout(node, 'node', main);
}
