/**
 * Sealing the vault's values with age: each value one armored age file, sealed to the
 * recipients of berth.json (else to berth's own identity), opened with berth's identity.
 * The format is the age authors' own library (`age-encryption`, on Web Crypto), imported
 * when a value is first sealed or opened, so a command that touches none never loads it.
 */

import type { Identity } from 'age-encryption';
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

const looked = (found: { looked: readonly string[] }) => found.looked.join(', ');

/**
 * The age seal over `keys`. The recipients and the identity are read once a process; the
 * values of one call are sealed at once (Web Crypto works off the main thread).
 */
export function ageSeal(keys: Keys): Seal {
  let sealTo: { to: string; encrypter: Promise<import('age-encryption').Encrypter> } | undefined;
  let opener: ReturnType<typeof openWith> | undefined;

  /** berth's identities, each read now so a broken one is said once, with its recipient. */
  const identity = async () => {
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

  /** The identities as keys to open with, made once a process. */
  const openWith = async () => {
    const own = await identity();
    if (!('lines' in own)) return own;
    const { identityKey } = await import('./identity-key.ts');
    const keys = await Promise.all(
      own.lines.map((line, at) => identityKey(line, own.recipients[at] as string)),
    );
    return { named: own.named, keys };
  };

  const recipients = async (fresh: () => Promise<boolean>): Promise<readonly string[]> => {
    const named = await keys.recipients();
    if (named && named.length > 0) return named;
    const { identityToRecipient, generateX25519Identity } = await loadAge();
    const own = await identity();
    if ('lines' in own) return own.recipients;
    if (!(await fresh()))
      throw new VaultError(
        `berth cannot seal a value: berth.json names no "recipients" and berth has no identity (it looked at ${looked(own)}); the vault holds sealed values already, so berth makes no new identity over them: put back the identity they were sealed to, or name "recipients" in berth.json`,
      );
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
      if (sealTo?.to !== key)
        sealTo = {
          to: key,
          encrypter: loadAge().then(({ Encrypter }) => {
            const encrypter = new Encrypter();
            for (const recipient of to) encrypter.addRecipient(recipient);
            return encrypter;
          }),
        };
      const [{ armor }, encrypter] = await Promise.all([loadAge(), sealTo.encrypter]);
      return Promise.all(values.map(async (value) => armor.encode(await encrypter.encrypt(value))));
    },
    async open(sealed, what) {
      // A missing identity is looked for again next time; a found one is kept.
      const attempt = opener ?? openWith();
      const found = await attempt;
      if (!('keys' in found))
        throw new VaultError(
          `berth needs its age identity to open the sealed ${what}, and found none: it looked at ${looked(found)}`,
          { noIdentity: true },
        );
      opener = attempt;
      const { Decrypter, armor } = await loadAge();
      // Tried after berth's own identities, this one is reached only when none of them
      // matched a stanza of the file: sealed to others, not broken.
      let unmatched = false;
      const last: Identity = {
        unwrapFileKey: () => {
          unmatched = true;
          return null;
        },
      };
      const decrypter = new Decrypter();
      for (const key of found.keys) decrypter.addIdentity(key);
      decrypter.addIdentity(last);
      try {
        return await decrypter.decrypt(armor.decode(sealed.trim()));
      } catch (error) {
        throw new VaultError(
          unmatched
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
