/**
 * The sealed vault's tests meet berth as an operator does: the real binary, the reference
 * `age` tools (Debian's age), and an identity in a configuration directory of the test's
 * own.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from '../helpers/needs.ts';
import { type Run, runBerth } from '../helpers/world.ts';

/** Why the reference age cannot be used here, or undefined. */
export function ageUnavailable(): string | undefined {
  return needs('age', 'age') || needs('age-keygen', 'age') || undefined;
}

/** A new identity from the reference age-keygen: its file and its recipient. */
export async function keygen(
  dir: string,
  name: string,
): Promise<{ file: string; recipient: string }> {
  const file = join(dir, `${name}.txt`);
  execFileSync('age-keygen', ['-o', file], { stdio: 'ignore' });
  const recipient = execFileSync('age-keygen', ['-y', file], { encoding: 'utf8' }).trim();
  return { file, recipient };
}

/** Opens an armored age file with the reference age; undefined when the identity cannot. */
export function ageDecrypt(sealed: string, identityFile: string): Buffer | undefined {
  try {
    return execFileSync('age', ['-d', '-i', identityFile], {
      input: sealed,
      stdio: ['pipe', 'pipe', 'ignore'],
    });
  } catch {
    return undefined;
  }
}

/** Seals a value with the reference age, armored, to `recipients`. */
export function ageEncrypt(value: string, recipients: string[]): string {
  return execFileSync('age', ['-a', ...recipients.flatMap((r) => ['-r', r])], {
    input: value,
    encoding: 'utf8',
  });
}

/** An operator's environment with no identity of berth's but where `config` says. */
export async function operator(): Promise<{
  config: string;
  identityFile: string;
  env: Record<string, string | undefined>;
}> {
  const config = await mkdtemp(join(tmpdir(), 'berth-config-'));
  return {
    config,
    identityFile: join(config, 'berth', 'identity.txt'),
    env: { XDG_CONFIG_HOME: config, BERTH_IDENTITY: undefined, CREDENTIALS_DIRECTORY: undefined },
  };
}

/** Runs the binary on `state` in `env`. */
export function berthIn(
  state: string,
  env: Record<string, string | undefined>,
): (...args: string[]) => Promise<Run> {
  return (...args) => runBerth(['--state', state, ...args], env);
}

/** A secret as someone could find it written down: as is, base64 and hex. */
export function spellings(secret: string): string[] {
  const bytes = Buffer.from(secret);
  return [secret, bytes.toString('base64').replace(/=+$/, ''), bytes.toString('hex')];
}

/** Each file under `dir` (but the catalog) that holds a spelling of a secret: `path: secret`. */
export async function secretsFoundIn(dir: string, secrets: string[]): Promise<string[]> {
  const found: string[] = [];
  const walk = async (here: string) => {
    for (const name of await readdir(here)) {
      const path = join(here, name);
      const info = await stat(path);
      if (info.isDirectory()) await walk(path);
      else if (info.isFile()) {
        const text = await readFile(path, 'latin1');
        for (const secret of secrets)
          for (const spelled of spellings(secret))
            if (text.includes(spelled)) found.push(`${path}: ${spelled}`);
      }
    }
  };
  await walk(dir);
  return found;
}
