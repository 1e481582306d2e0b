import { valueProblemWords } from '../model/values.ts';
import { didYouMean } from '../utils/did-you-mean.ts';
import type { ModuleIssuer, ModuleIssuerRefusal } from './module-issuer.ts';

/** Where `--issuer MODULE@NODE` found its URL, said beside the start lines. */
export function moduleIssuerWords(named: string, issuer: ModuleIssuer): string {
  const { module, node, url, facts } = issuer;
  const from = `provides.issuer of ${module} on ${node}`;
  const read =
    facts.from === 'inventory'
      ? ''
      : facts.from === 'survey'
        ? `, with ${node}'s facts surveyed now`
        : `, with the facts of ${node}'s survey kept at ${facts.at} (${node} cannot be reached now: ${facts.why})`;
  return `berth api: --issuer ${named} is ${url}: ${from}${read}`;
}

/** Why berth api does not start on `--issuer MODULE@NODE`, and what to do. */
export function moduleIssuerRefusalWords(named: string, refusal: ModuleIssuerRefusal): string {
  return `berth api --issuer ${named}: ${why(refusal)}`;
}

function why(refusal: ModuleIssuerRefusal): string {
  switch (refusal.kind) {
    case 'form':
      return "give --issuer the issuer's URL (https://…), or one module and the node it runs on, as MODULE@NODE (glewlwyd@idp1)";
    case 'unreadable':
      return refusal.why;
    case 'no-node':
      return `berth.json has no node ${refusal.node}${didYouMean(refusal.node, refusal.known)}`;
    case 'no-module':
      return `no module ${refusal.module}: ${refusal.problem}${didYouMean(refusal.module, refusal.known)}`;
    case 'provides-none':
      return `${refusal.module} provides no issuer: its definition names none under provides.issuer; give --issuer the issuer's URL instead`;
    case 'not-to-run':
      return `${refusal.node} is not to run ${refusal.module}: assign it first (berth assign ${refusal.node} ${refusal.module}), then start berth api`;
    case 'value':
      return valueProblemWords(refusal.problem, refusal.node);
    case 'unreachable':
      return `${refusal.node} cannot be reached (${refusal.why}), and berth keeps no survey of it with its facts: reach it once (berth converge ${refusal.node} previews and keeps one), then start berth api`;
    case 'facts-untold':
      return `provides.issuer of ${refusal.module} reads ${refusal.facts.map((name) => `{{fact ${name}}}`).join(' and ')}, which ${refusal.node} did not tell`;
    case 'unusable':
      return `${refusal.module} provides ${refusal.url}, which berth will not use: ${refusal.why}`;
  }
}
