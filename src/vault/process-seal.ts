import { identityFiles } from './identity-files.ts';
import { ageSeal, type Seal } from './seal.ts';

type Env = Record<string, string | undefined>;

/**
 * The seal of this process: berth's identity as `env` finds it, and the recipients
 * `recipients` answers (berth.json's; none by default, so values are sealed to the
 * identity). A new identity is said on standard error.
 */
export function processSeal(
  env: Env = process.env,
  recipients: () => Promise<readonly string[] | undefined> = async () => undefined,
): Seal {
  return ageSeal(identityFiles(env, recipients, (line) => process.stderr.write(`${line}\n`)));
}
