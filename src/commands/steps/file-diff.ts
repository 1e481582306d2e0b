import { renderFile, SECRET_PLACEHOLDER } from '../../catalog.ts';
import { hideSecrets, unifiedDiff } from '../../diff.ts';
import type { PathFacts } from '../../machines/machine.ts';
import type { WriteReason } from './step.ts';

/**
 * The secret values a module's files are rendered with, and every value a diff must not
 * show (what the machine holds and what the vault keeps, each named in its place).
 */
export interface SecretsInFiles {
  values: Record<string, string>;
  hidden: (readonly [string, string])[];
}

/**
 * The one diff of every plan: what berth would write at `path` (`content` rendered with
 * the secrets' values) against what the machine holds there. `why` is missing (nothing
 * or no file there), differs (with the diff, each secret shown as `[secret NAME]`), or
 * absent when the bytes are the same; `wanted` is the bytes berth would write.
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
    ? unifiedDiff(
        hideSecrets(new TextDecoder().decode(held), secrets.hidden),
        content.replace(SECRET_PLACEHOLDER, (_, name: string) => `[secret ${name}]`),
        { held: heldLabel(path, node), wanted: `${path} as berth writes it` },
      )
    : [`(over ${fact.size} bytes: too long to read)`];
  return { wanted, why: { because: 'differs', diff } };
}

/** The label of the machine's side of a file's diff: `/etc/x on web1`. */
export function heldLabel(path: string, node: string): string {
  return `${path} on ${node}`;
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}
