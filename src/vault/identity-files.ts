import { mkdir, open, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type { FoundIdentity, Keys } from './seal.ts';

/** The systemd credential `berth api` reads its identity from, under `LoadCredential=`. */
export const IDENTITY_CREDENTIAL = 'berth-identity';

type Env = Record<string, string | undefined>;

/**
 * Where berth looks for its identity, in order: `$BERTH_IDENTITY`, the systemd
 * credential, then `$XDG_CONFIG_HOME/berth/identity.txt` (else ~/.config's), which is also
 * where a new one is made. Each place as the words of a refusal name it.
 */
export function identityPlaces(env: Env): { path?: string; named: string }[] {
  const config = env.XDG_CONFIG_HOME || join(homedir(), '.config');
  const own = join(config, 'berth', 'identity.txt');
  return [
    env.BERTH_IDENTITY
      ? { path: env.BERTH_IDENTITY, named: `$BERTH_IDENTITY (${env.BERTH_IDENTITY})` }
      : { named: '$BERTH_IDENTITY (not set)' },
    env.CREDENTIALS_DIRECTORY
      ? {
          path: join(env.CREDENTIALS_DIRECTORY, IDENTITY_CREDENTIAL),
          named: join(env.CREDENTIALS_DIRECTORY, IDENTITY_CREDENTIAL),
        }
      : { named: `$CREDENTIALS_DIRECTORY/${IDENTITY_CREDENTIAL} (not set)` },
    { path: own, named: own },
  ];
}

/**
 * The keys of this machine: recipients from berth.json (`recipients`), the identity from
 * the first place that holds one. A new identity is made mode 0600, never over a file,
 * and said once on standard error with its path and recipient.
 */
export function identityFiles(
  env: Env,
  recipients: () => Promise<readonly string[] | undefined>,
  say: (line: string) => void,
): Keys {
  const places = identityPlaces(env);
  return {
    recipients,
    async identity(): Promise<FoundIdentity> {
      const looked: string[] = [];
      for (const place of places) {
        if (place.path === undefined) {
          looked.push(place.named);
          continue;
        }
        try {
          return {
            text: await readFile(place.path, 'utf8'),
            named: `the identity in ${place.path}`,
          };
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          looked.push(`${place.named} (${code === 'ENOENT' ? 'no such file' : code})`);
        }
      }
      return { looked };
    },
    async keepNewIdentity(text, recipient) {
      const path = places.at(-1)?.path as string;
      await mkdir(dirname(path), { recursive: true, mode: 0o700 });
      const file = await open(path, 'wx', 0o600);
      try {
        await file.writeFile(
          `# made by berth on ${new Date().toISOString()}\n# public key: ${recipient}\n${text}\n`,
        );
        await file.sync();
      } finally {
        await file.close();
      }
      say(
        `berth made its age identity in ${path} (recipient ${recipient}); keep it safe: without it the secrets berth keeps cannot be restored`,
      );
      return path;
    },
  };
}
