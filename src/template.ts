import type { Facts } from './facts.ts';
import { ownValue } from './own-record.ts';
import { type Value, valueText } from './values.ts';

/**
 * Templates: a file's `content` or `source`, and what a definition says in place of a URL
 * (`https://{{fact fqdn}}/`). `{{secret NAME}}` places a kept secret, `{{value NAME}}` a
 * value the module declares, `{{fact NAME}}` a fact of the node. Nothing else is read:
 * other braces are text.
 */
export const PLACEHOLDER = /\{\{(secret|value|fact) ([a-z][a-z0-9_]*)\}\}/g;

/** What a template is rendered with: a module's values, its node's facts, its secrets' text. */
export interface TemplateInputs {
  values?: Readonly<Record<string, Value>>;
  facts?: Facts;
  secrets?: Readonly<Record<string, string>>;
}

/** What a template reads, by kind: the names of the secrets, values and facts it places. */
export interface Reads {
  secret: Set<string>;
  value: Set<string>;
  fact: Set<string>;
}

export function readsOf(text: string): Reads {
  const reads: Reads = { secret: new Set(), value: new Set(), fact: new Set() };
  for (const match of text.matchAll(PLACEHOLDER))
    reads[match[1] as keyof Reads].add(match[2] as string);
  return reads;
}

/**
 * The one rendering of a template, for files, their diffs and anything else a definition
 * says of a node: each placeholder replaced by its input, as text (a value `8`, `true`);
 * one without an input is left empty, which a plan never lets reach a machine (a value or
 * fact it lacks is a blocker).
 */
export function renderTemplate(text: string, inputs: TemplateInputs): string {
  return text.replace(PLACEHOLDER, (_, kind: keyof Reads, name: string) => {
    if (kind === 'secret') return ownValue(inputs.secrets ?? {}, name) ?? '';
    if (kind === 'value') {
      const value = ownValue(inputs.values ?? {}, name);
      return value === undefined ? '' : valueText(value);
    }
    return ownValue(inputs.facts ?? {}, name) ?? '';
  });
}

/**
 * The placeholders on each line a template renders to: which values and facts made the
 * lines of the rendered text (`value workers`, `fact fqdn`), by the rendered line's index.
 * A diff says by it which of them the lines that differ read.
 */
export function readingsByLine(text: string, inputs: TemplateInputs): string[][] {
  const byLine: string[][] = [];
  for (const line of linesOf(text)) {
    const rendered = renderTemplate(line, inputs);
    const reads = readsOf(line);
    const names = [
      ...[...reads.value].map((name) => `value ${name}`),
      ...[...reads.fact].map((name) => `fact ${name}`),
    ];
    for (const _ of linesOf(rendered)) byLine.push(names);
  }
  return byLine;
}

/** Each line with its newline, as a diff counts them. */
function linesOf(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}
