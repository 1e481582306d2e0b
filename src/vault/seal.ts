/**
 * Sealing the vault's values with age: each value one armored age file, sealed to the
 * recipients of berth.json (else to berth's own identity), opened with berth's identity.
 * The format is the age authors' own library (`age-encryption`, on Web Crypto), imported
 * when a value is first sealed or opened, so a command that touches none never loads it.
 */

import type { Encrypter } from 'age-encryption';
import { once } from '../utils/once.ts';

/** The first line of every armored age file: a kept value that starts otherwise is not sealed. */
export const SEALED_HEAD = '-----BEGIN AGE ENCRYPTED FILE-----';

export function isSealed(text: string): boolean {
  return text.startsWith(SEALED_HEAD);
}

/**
 * An identity as found: its text, and where it came from in words ("the identity in
 * /root/.config/berth/identity.txt"); or, when none, where berth looked.
 */
export type FoundIdentity = { text: string; named: string } | { looked: readonly string[] };

/** Where the keys come from: berth.json's recipients, and berth's identity (an edge reads files). */
export interface Keys {
  /** berth.json's `recipients`, or undefined when it names none. */
  recipients(): Promise<readonly string[] | undefined>;
  identity(): Promise<FoundIdentity>;
  /** Keeps a new identity where berth looks last, and says so once; answers its path. */
  keepNewIdentity(text: string, recipient: string): Promise<string>;
}

/**
 * Seals and opens the vault's values. `fresh` answers whether the stores hold no sealed
 * value yet: only then may berth make itself an identity to seal to.
 */
export interface Seal {
  seal(values: readonly Uint8Array[], fresh: () => Promise<boolean>): Promise<string[]>;
  /** `what` names the value in a refusal: "db_password of gitea on web1". */
  open(sealed: string, what: string): Promise<Uint8Array>;
}

/** A value that cannot be sealed or opened, in words naming what berth needs and where it looked. */
export class VaultError extends Error {
  override name = 'VaultError';
  /** No identity at all, rather than one that does not open this value. */
  readonly noIdentity: boolean;
  constructor(message: string, { noIdentity = false } = {}) {
    super(message);
    this.noIdentity = noIdentity;
  }
}

/**
 * Opening for a rekey: a value the identity cannot open is named in `unopened` and skipped
 * (kept as it was), while no identity at all refuses the whole.
 */
export function openingEach(): {
  unopened: string[];
  tryOpen: (what: string, opening: () => Promise<Uint8Array>) => Promise<Uint8Array | undefined>;
} {
  const unopened: string[] = [];
  const tryOpen = (what: string, opening: () => Promise<Uint8Array>) =>
    opening().catch((error: unknown) => {
      if (!(error instanceof VaultError) || error.noIdentity) throw error;
      unopened.push(what);
      return undefined;
    });
  return { unopened, tryOpen };
}

/** The age authors' own library, loaded when a value is first sealed or opened. */
const loadAge = once(() => import('age-encryption'));

/** The identities an identity file holds: its lines that are not comments. */
export function identitiesIn(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

type Looked = { looked: readonly string[] };
const looked = (found: Looked) => found.looked.join(', ');

/** berth's identities as found: each line, and the recipient it is. */
type OwnIdentity = { named: string; lines: string[]; recipients: string[] };

/**
 * Thrown by the identity tried after berth's own: reached only when none of them matched a
 * stanza of the file, which was then sealed to others, not broken.
 */
class SealedToOthers extends Error {}

/**
 * age-encryption's streams, given and read here: given bytes, it reads its answer through
 * a fetch `Response`, and the first in a process loads Node's fetch (about 20 ms of CPU).
 */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

async function bytesOf(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  for (let read = await reader.read(); !read.done; read = await reader.read())
    chunks.push(read.value);
  const bytes = new Uint8Array(chunks.reduce((length, chunk) => length + chunk.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/**
 * `load`'s answer, shared by the calls made while it is under way and kept once `found`
 * holds of it: a missing or broken identity is looked for again by the next call, while
 * the values a converge opens at once wait on one reading of a found one.
 */
function keptOnceFound<T>(load: () => Promise<T>, found: (value: T) => boolean): () => Promise<T> {
  let loading: Promise<T> | undefined;
  const forget = (attempt: Promise<T>) => {
    if (loading === attempt) loading = undefined;
  };
  return () => {
    if (loading) return loading;
    const attempt = load();
    loading = attempt;
    attempt.then(
      (value) => found(value) || forget(attempt),
      () => forget(attempt),
    );
    return attempt;
  };
}

/**
 * The age seal over `keys`. berth's identity is read until found, then kept, as are the
 * recipients' keys and the identity's for opening: each is made once a process. The values
 * of one call are sealed at once (Web Crypto works off the main thread).
 */
export function ageSeal(keys: Keys): Seal {
  let sealTo: { to: string; encrypter: Promise<Encrypter> } | undefined;

  /** berth's identities, each read now so a broken one is said once, with its recipient. */
  const readIdentity = async (): Promise<OwnIdentity | Looked> => {
    const found = await keys.identity();
    if ('looked' in found) return found;
    const lines = identitiesIn(found.text).map((line) => line.toUpperCase());
    if (lines.length === 0 || !lines.every((line) => line.startsWith('AGE-SECRET-KEY-1')))
      throw new VaultError(
        `${found.named} is not an age identity: berth reads lines of AGE-SECRET-KEY-1…, and # comments`,
      );
    const { identityToRecipient } = await loadAge();
    const recipients = await Promise.all(
      lines.map((line) =>
        identityToRecipient(line).catch((error: Error) => {
          throw new VaultError(`${found.named} is not an age identity: ${error.message}`);
        }),
      ),
    );
    return { named: found.named, lines, recipients };
  };
  const identity = keptOnceFound(readIdentity, (found) => 'lines' in found);

  /** One decrypter a process, holding the identities as Web Crypto keys. */
  const openWith = async () => {
    const found = await identity();
    if (!('lines' in found)) return found;
    const [{ Decrypter }, { identityKey }] = await Promise.all([
      loadAge(),
      import('./identity-key.ts'),
    ]);
    const keys = await Promise.all(
      found.lines.map((line, at) => identityKey(line, found.recipients[at] as string)),
    );
    const decrypter = new Decrypter();
    for (const key of keys) decrypter.addIdentity(key);
    decrypter.addIdentity({
      unwrapFileKey: () => {
        throw new SealedToOthers();
      },
    });
    return { named: found.named, decrypter };
  };
  const opener = keptOnceFound(openWith, (found) => 'decrypter' in found);

  /** One encrypter for the recipients; each file is wrapped with a fresh ephemeral key. */
  const encrypterTo = async (to: readonly string[]) => {
    const { Encrypter } = await loadAge();
    const encrypter = new Encrypter();
    for (const recipient of to) encrypter.addRecipient(recipient);
    return encrypter;
  };

  const recipients = async (fresh: () => Promise<boolean>): Promise<readonly string[]> => {
    const named = await keys.recipients();
    if (named && named.length > 0) return named;
    const found = await identity();
    if ('lines' in found) return found.recipients;
    if (!(await fresh()))
      throw new VaultError(
        `berth cannot seal a value: berth.json names no "recipients" and berth has no identity (it looked at ${looked(found)}); the vault holds sealed values already, so berth makes no new identity over them: put back the identity they were sealed to, or name "recipients" in berth.json`,
      );
    const { identityToRecipient, generateX25519Identity } = await loadAge();
    const made = await generateX25519Identity();
    const recipient = await identityToRecipient(made);
    try {
      await keys.keepNewIdentity(made, recipient);
    } catch (error) {
      // Another berth made one meanwhile: that one is berth's.
      const now = await identity();
      if (!('lines' in now)) throw error;
      return now.recipients;
    }
    return [recipient];
  };

  return {
    async seal(values, fresh) {
      if (values.length === 0) return [];
      const to = await recipients(fresh);
      const key = to.join(' ');
      if (sealTo?.to !== key) sealTo = { to: key, encrypter: encrypterTo(to) };
      const [{ armor }, encrypter] = await Promise.all([loadAge(), sealTo.encrypter]);
      return Promise.all(
        values.map(async (value) =>
          armor.encode(await bytesOf(await encrypter.encrypt(streamOf(value)))),
        ),
      );
    },
    async open(sealed, what) {
      const found = await opener();
      if (!('decrypter' in found))
        throw new VaultError(
          `berth needs its age identity to open the sealed ${what}, and found none: it looked at ${looked(found)}`,
          { noIdentity: true },
        );
      const { armor } = await loadAge();
      try {
        return await bytesOf(await found.decrypter.decrypt(streamOf(armor.decode(sealed.trim()))));
      } catch (error) {
        throw new VaultError(
          error instanceof SealedToOthers
            ? `the sealed ${what} cannot be opened with ${found.named}: it was sealed to other recipients`
            : `the sealed ${what} cannot be opened: ${(error as Error).message}`,
        );
      }
    },
  };
}

/**
 * Keys held in memory, not in files: an identity's text (and recipients, when values are
 * to be sealed to others too), for a host without a file system and for tests. Without an
 * identity berth has none to make one in, so it seals only to `recipients`.
 */
export function heldKeys(identity: string | undefined, recipients?: readonly string[]): Keys {
  const named = 'the identity berth was given';
  return {
    recipients: async () => recipients,
    identity: async () =>
      identity === undefined ? { looked: [`${named} (none)`] } : { text: identity, named },
    keepNewIdentity: async () => {
      throw new VaultError(`berth was given no identity and keeps none of its own: give it one`);
    },
  };
}
