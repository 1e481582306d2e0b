import { once } from '../once.ts';
import type { AgePrimitives } from './age-primitives.ts';
import { identityFiles } from './identity-files.ts';
import { ageSeal, type Keys, type Seal } from './seal.ts';

type Env = Record<string, string | undefined>;

/** node:crypto's primitives, synchronous: what berth's Node process seals and opens with. */
export const nodePrimitives = once(
  async (): Promise<AgePrimitives> => (await import('./node-primitives.ts')).nodePrimitives,
);

/** The age seal over `keys` as this Node process makes it. */
export const nodeAgeSeal = (keys: Keys): Seal => ageSeal(keys, nodePrimitives);

/**
 * The seal of this process: berth's identity as `env` finds it, and the recipients
 * `recipients` answers (berth.json's; none by default, so values are sealed to the
 * identity). A new identity is said on standard error.
 */
export function processSeal(
  env: Env = process.env,
  recipients: () => Promise<readonly string[] | undefined> = async () => undefined,
): Seal {
  return nodeAgeSeal(identityFiles(env, recipients, (line) => process.stderr.write(`${line}\n`)));
}
