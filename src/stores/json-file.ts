import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import * as v from 'valibot';
import { describeIssues } from '../utils/schema-issues.ts';
import { StoreError } from './stores.ts';

/**
 * Reads and checks one of the state files; `missing` answers for a file not there. The
 * words of a file that `holdsSecrets` say where it is wrong, never what it holds: the
 * parser and the validator quote what they saw, and in a vault that is a secret value
 * or the fingerprint key.
 */
export async function readJson<S extends v.GenericSchema, M>(
  path: string,
  schema: S,
  missing: () => M,
  { holdsSecrets = false } = {},
): Promise<v.InferOutput<S> | M> {
  let text: string;
  try {
    // A state file is small and local: read in place (see syncToDisk).
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return missing();
    throw storeErrorOf(error, `${path} cannot be read`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    const position = /at position \d+/.exec(message)?.[0];
    const why = holdsSecrets
      ? `${position ? ` ${position}` : ''} (the parser's words are not shown: they could quote a secret)`
      : `: ${message}`;
    throw new StoreError(`${path} is not valid JSON${why}`);
  }
  const result = v.safeParse(schema, json);
  if (!result.success) {
    const why = describeIssues(result.issues, schema, { quoteValues: !holdsSecrets });
    throw new StoreError(`${path} is not valid: ${why}`);
  }
  return result.output;
}

/** A vault must be readable by its owner alone; berth will not use one that is not. */
export async function refuseOpenVault(path: string) {
  const info = await stat(path).catch(() => undefined);
  if (info && (info.mode & 0o077) !== 0) {
    throw new StoreError(
      `${path} can be read by others (mode ${(info.mode & 0o777).toString(8)}); make it 0600 (chmod 600 ${path})`,
    );
  }
}

/** A failure of the file system as a StoreError, in words: what could not be done, and why. */
export function storeErrorOf(error: unknown, context: string): StoreError {
  if (error instanceof StoreError) return error;
  const code = (error as NodeJS.ErrnoException).code;
  const reason =
    code === 'EACCES' || code === 'EPERM'
      ? 'permission denied'
      : code === 'EROFS'
        ? 'the file system is read-only'
        : code === 'ENOSPC'
          ? 'no space is left on the device'
          : (error as Error).message;
  return new StoreError(`${context}: ${reason}`);
}
