import { ownValue } from '../utils/own-record.ts';
import type { Facts } from './facts.ts';
import type { Value } from './value-type.ts';
import { valueText } from './values.ts';

/**
 * Templates: a file's `content` or `source`, and what a definition says in place of a URL
 * (`https://{{fact fqdn}}/`) or a certificate's name. `{{secret NAME}}` places a kept
 * secret (a key's PEM), `{{value NAME}}` a value the module declares, `{{fact NAME}}` a
 * fact of the node; of a key secret, `{{public NAME}}` its public key (SPKI PEM) and
 * `{{jwk NAME}}` its public JWK; of a `tls` secret, `{{cert NAME}}` its certificate; and
 * `{{ca}}` the state's CA's certificate. Nothing else is read: other braces are text.
 */
export const PLACEHOLDER =
  /\{\{(?:(secret|value|fact|public|jwk|cert) ([a-z][a-z0-9_]*)|(ca))\}\}/g;

/** Whether a text holds a placeholder at all (a copy without `g`, so it keeps no state). */
export const PLACEHOLDER_TEST = new RegExp(PLACEHOLDER.source);

/** A key secret's public half, as templates place it. */
export interface PublicHalf {
  /** SPKI PEM, ending with a newline. */
  publicPem: string;
  /** The public JWK with its kid, as JSON on one line. */
  jwk: string;
}

/** What a template is rendered with: a module's values, its node's facts, its secrets' text. */
export interface TemplateInputs {
  values?: Readonly<Record<string, Value>>;
  facts?: Facts;
  /** Each secret's text: a random one's value, a key's private PEM. */
  secrets?: Readonly<Record<string, string>>;
  /** Each key secret's public half. */
  keys?: Readonly<Record<string, PublicHalf>>;
  /** Each `tls` secret's certificate, PEM. */
  certs?: Readonly<Record<string, string>>;
  /** The state's CA's certificate, PEM. */
  ca?: string;
}

/** The kinds of placeholder that name something: a secret, a value, a fact, a key's halves. */
type NamedKind = 'secret' | 'value' | 'fact' | 'public' | 'jwk' | 'cert';

/** What a template reads, by kind: the names of what it places, and whether it places the CA. */
export interface Reads {
  secret: Set<string>;
  value: Set<string>;
  fact: Set<string>;
  public: Set<string>;
  jwk: Set<string>;
  cert: Set<string>;
  ca: boolean;
}

export function readsOf(text: string): Reads {
  const reads: Reads = {
    secret: new Set(),
    value: new Set(),
    fact: new Set(),
    public: new Set(),
    jwk: new Set(),
    cert: new Set(),
    ca: false,
  };
  for (const match of text.matchAll(PLACEHOLDER)) {
    if (match[3] !== undefined) reads.ca = true;
    else reads[match[1] as NamedKind].add(match[2] as string);
  }
  return reads;
}

/** The key secrets a template reads of besides their private PEM: their public halves, certificates. */
export function keysRead(reads: Reads): Set<string> {
  return new Set([...reads.public, ...reads.jwk, ...reads.cert]);
}

/**
 * The one rendering of a template, for files, their diffs and anything else a definition
 * says of a node: each placeholder replaced by its input, as text (a value `8`, `true`);
 * one without an input is left empty, which a plan never lets reach a machine (a value or
 * fact it lacks is a blocker; a key it does not have yet is minted first).
 */
export function renderTemplate(text: string, inputs: TemplateInputs): string {
  return text.replace(
    PLACEHOLDER,
    (_, kind: NamedKind | undefined, name: string | undefined, ca: string | undefined) => {
      if (ca !== undefined || kind === undefined || name === undefined) return inputs.ca ?? '';
      switch (kind) {
        case 'secret':
          return ownValue(inputs.secrets ?? {}, name) ?? '';
        case 'value': {
          const value = ownValue(inputs.values ?? {}, name);
          return value === undefined ? '' : valueText(value);
        }
        case 'fact':
          return ownValue(inputs.facts ?? {}, name) ?? '';
        case 'public':
          return ownValue(inputs.keys ?? {}, name)?.publicPem ?? '';
        case 'jwk':
          return ownValue(inputs.keys ?? {}, name)?.jwk ?? '';
        case 'cert':
          return ownValue(inputs.certs ?? {}, name) ?? '';
      }
    },
  );
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
