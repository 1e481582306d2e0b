import { renderFile, SECRET_PLACEHOLDER } from '../../catalog.ts';
import { unifiedDiff } from '../../diff.ts';
import type { PathFacts } from '../../machines/machine.ts';
import { ownValue } from '../../own-record.ts';
import { maskInPlace, maskLine, type NamedValue } from '../../secret-masks.ts';
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
 * the secrets' values) against what the machine holds there. `why` is missing (nothing
 * or no file there), differs (with the diff, which shows no secret: see secret-masks.ts),
 * or absent when the bytes are the same; `wanted` is the bytes berth would write.
 */
export function compareFile(
  node: string,
  path: string,
  fact: PathFacts | undefined,
  content: string,
  secrets: SecretsInFiles,
): { wanted: Uint8Array; why?: WriteReason & { because: 'missing' | 'differs' } } {
  const wanted = new TextEncoder().encode(renderFile(content, secrets.values));
  if (fact?.kind !== 'file') return { wanted, why: { because: 'missing' } };
  const held = fact.bytes;
  if (held && sameBytes(held, wanted)) return { wanted };
  const diff = held
    ? maskedDiff(new TextDecoder().decode(held), shownRender(content, secrets), secrets.hidden, {
        held: heldLabel(path, node),
        wanted: `${path} as berth writes it`,
      })
    : [`(over ${fact.size} bytes: too long to read)`];
  return { wanted, why: { because: 'differs', diff } };
}

/** What berth writes, as a diff compares it: each value it knows in place, else `[secret NAME]`. */
function shownRender(content: string, secrets: SecretsInFiles): string {
  return content.replace(
    SECRET_PLACEHOLDER,
    (_, name: string) => ownValue(secrets.values, name) ?? `[secret ${name}]`,
  );
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
