/**
 * A vault's values opened without Debian's age: the identity berth finds, and a sealed
 * value opened through the age-encryption package. Apart from support.ts, whose helpers
 * run the reference age, so that a test that only reads the vault uses no optional program.
 */
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { armor, Decrypter } from 'age-encryption';

/** The identity file berth finds when the tests run it as this user, as berth looks. */
export function userIdentityFile(env = process.env): string {
  if (env.BERTH_IDENTITY) return env.BERTH_IDENTITY;
  if (env.CREDENTIALS_DIRECTORY) return join(env.CREDENTIALS_DIRECTORY, 'berth-identity');
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'berth', 'identity.txt');
}

/**
 * A sealed value opened with `identityFile`, or undefined when it does not open: through
 * the age-encryption package (age's TypeScript implementation, not berth's), so the tests
 * that only read the vault need no Debian age.
 */
export async function opened(sealed: string, identityFile: string): Promise<Buffer | undefined> {
  const decrypter = new Decrypter();
  for (const line of (await readFile(identityFile, 'utf8')).split('\n'))
    if (line.startsWith('AGE-SECRET-KEY-')) decrypter.addIdentity(line.trim());
  try {
    const file = sealed.startsWith('-----BEGIN') ? armor.decode(sealed) : Buffer.from(sealed);
    return Buffer.from(await decrypter.decrypt(file));
  } catch {
    return undefined;
  }
}
