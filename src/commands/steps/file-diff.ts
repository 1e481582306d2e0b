import { unifiedDiff } from '../../diff/diff.ts';
import { maskInPlace, maskLine, type NamedValue } from '../../diff/secret-masks.ts';
import type { PathFacts } from '../../machines/machine.ts';
import {
  readingsByLine,
  readsOf,
  renderTemplate,
  type TemplateInputs,
} from '../../model/template.ts';
import { ownValue } from '../../utils/own-record.ts';
import type { WriteReason } from './step.ts';

/**
 * The secret values a module's files are rendered with, and every value a diff must not
 * show: each the vault holds for the node, of any module, and each found on the machine.
 */
export interface SecretsInFiles {
  values: Record<string, string>;
  hidden: readonly NamedValue[];
}

/**
 * The one diff of every plan: what berth would write at `path` (`content` rendered with
 * the secrets' values and the module's values and the node's facts, `read`) against what
 * the machine holds there. `why` is missing (nothing or no file there), differs (with the
 * diff, which shows no secret: see secret-masks.ts, and the values and facts the lines
 * that differ read), or absent when the bytes are the same; `wanted` is the bytes berth
 * would write.
 */
export function compareFile(
  node: string,
  path: string,
  fact: PathFacts | undefined,
  content: string,
  secrets: SecretsInFiles,
  read: Omit<TemplateInputs, 'secrets'> = {},
): { wanted: Uint8Array; why?: WriteReason & { because: 'missing' | 'differs' } } {
  const wanted = new TextEncoder().encode(
    renderTemplate(content, { ...read, secrets: secrets.values }),
  );
  if (fact?.kind !== 'file') return { wanted, why: { because: 'missing' } };
  const held = fact.bytes;
  if (held && sameBytes(held, wanted)) return { wanted };
  if (!held)
    return {
      wanted,
      why: { because: 'differs', diff: [`(over ${fact.size} bytes: too long to read)`] },
    };
  // What berth writes, as a diff compares it: the values and facts as they are, each
  // secret's value where berth knows it (masked below), else `[secret NAME]`.
  const shown = {
    ...read,
    secrets: Object.fromEntries(
      [...readsOf(content).secret].map((name) => [
        name,
        ownValue(secrets.values, name) ?? `[secret ${name}]`,
      ]),
    ),
  };
  const diff = maskedDiff(
    new TextDecoder().decode(held),
    renderTemplate(content, shown),
    secrets.hidden,
    { held: heldLabel(path, node), wanted: `${path} as berth writes it` },
  );
  const reading = readingIn(diff, readingsByLine(content, shown));
  return {
    wanted,
    why: { because: 'differs', diff, ...(reading.length > 0 ? { reading } : {}) },
  };
}

/**
 * The values and facts the lines berth writes differently read (`value workers`, `fact
 * fqdn`), from the diff's hunks: each added line's number on berth's side, by the lines
 * of the template that made it.
 */
function readingIn(diff: readonly string[], byLine: readonly string[][]): string[] {
  const reading = new Set<string>();
  let line = 0;
  for (const text of diff.slice(2)) {
    const hunk = /^@@ -\S+ \+(\d+)(?:,(\d+))? @@/.exec(text);
    if (hunk) {
      // An empty side is named by the line before it.
      line = Number(hunk[1]) - (hunk[2] === '0' ? 0 : 1);
      continue;
    }
    if (text.startsWith('+')) for (const name of byLine[line++] ?? []) reading.add(name);
    else if (text.startsWith(' ')) line++;
  }
  return [...reading].sort();
}

/**
 * The diff of two texts as a preview shows it: each side's long values masked in place
 * before the lines are compared (so the same value on both sides is the same line), then
 * each shown line holding a short one masked whole; the labels and hunk heads are berth's.
 */
function maskedDiff(
  held: string,
  wanted: string,
  hidden: readonly NamedValue[],
  labels: { held: string; wanted: string },
): string[] {
  const lines = unifiedDiff(maskInPlace(held, hidden), maskInPlace(wanted, hidden), labels);
  return lines.map((line, index) => {
    const mark = line.charAt(0);
    if (index < 2 || (mark !== ' ' && mark !== '-' && mark !== '+')) return line;
    const shown = maskLine(line.slice(1), hidden);
    return shown === line.slice(1) ? line : `${mark}${shown}`;
  });
}

/** The label of the machine's side of a file's diff: `/etc/x on web1`. */
export function heldLabel(path: string, node: string): string {
  return `${path} on ${node}`;
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
