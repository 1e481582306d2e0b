/**
 * Sealing the vault's values with age: each value one armored age file, sealed to the
 * recipients of berth.json (else to berth's own identity), opened with berth's identity.
 * Standards only (Web Crypto and @noble's primitives), and imported when a value is first
 * sealed or opened, so a command that touches none never loads them.
 */
import type { X25519Identity, X25519Recipient } from './age-file.ts';

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

type Age = typeof import('age-encryption');
let age: Promise<Age> | undefined;
/** age-encryption: berth's identity made, recipients of identities, and the armor. */
const loadAge = () => {
  age ??= import('age-encryption');
  return age;
};
type AgeFile = typeof import('./age-file.ts');
let ageFile: Promise<AgeFile> | undefined;
/** Each value sealed and opened as one age file (see age-file.ts for why not age-encryption's). */
const loadAgeFile = () => {
  ageFile ??= import('./age-file.ts');
  return ageFile;
};

/** The identities an identity file holds: its lines that are not comments. */
export function identitiesIn(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const looked = (found: { looked: readonly string[] }) => found.looked.join(', ');

/**
 * The age seal over `keys`. The recipients' keys and the identity are imported once a
 * process; the values of one call are sealed or opened at once (Web Crypto works off the
 * main thread).
 */
export function ageSeal(keys: Keys): Seal {
  let sealTo: { to: string; imported: Promise<X25519Recipient[]> } | undefined;
  let opener: Promise<{ named: string; identities: X25519Identity[] }> | undefined;

  const identity = async () => {
    const found = await keys.identity();
    if ('looked' in found) return found;
    const lines = identitiesIn(found.text);
    if (lines.length === 0 || !lines.every((line) => line.startsWith('AGE-SECRET-KEY-1')))
      throw new VaultError(
        `${found.named} is not an age identity: berth reads lines of AGE-SECRET-KEY-1…, and # comments`,
      );
    return { named: found.named, lines };
  };

  const recipients = async (fresh: () => Promise<boolean>): Promise<readonly string[]> => {
    const named = await keys.recipients();
    if (named && named.length > 0) return named;
    const { identityToRecipient, generateX25519Identity } = await loadAge();
    const own = await identity();
    if ('lines' in own) return Promise.all(own.lines.map((line) => identityToRecipient(line)));
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
      return Promise.all(now.lines.map((line) => identityToRecipient(line)));
    }
    return [recipient];
  };

  const openWith = async () => {
    const own = await identity();
    if (!('lines' in own)) return own;
    const { importIdentity } = await loadAgeFile();
    const identities = await Promise.all(
      own.lines.map((line) =>
        importIdentity(line).catch((error: Error) => {
          throw new VaultError(`${own.named} is not an age identity: ${error.message}`);
        }),
      ),
    );
    return { named: own.named, identities };
  };

  return {
    async seal(values, fresh) {
      if (values.length === 0) return [];
      const to = await recipients(fresh);
      const key = to.join(' ');
      if (sealTo?.to !== key)
        sealTo = {
          to: key,
          imported: loadAgeFile().then(({ importRecipient }) =>
            Promise.all(to.map((recipient) => importRecipient(recipient))),
          ),
        };
      const [{ armor }, { sealAge }, imported] = await Promise.all([
        loadAge(),
        loadAgeFile(),
        sealTo.imported,
      ]);
      return Promise.all(values.map(async (value) => armor.encode(await sealAge(value, imported))));
    },
    async open(sealed, what) {
      // A missing identity is looked for again next time; a found one is kept.
      const attempt = opener ?? openWith();
      const found = await attempt;
      if (!('identities' in found))
        throw new VaultError(
          `berth needs its age identity to open the sealed ${what}, and found none: it looked at ${looked(found)}`,
          { noIdentity: true },
        );
      opener = attempt as typeof opener;
      const [{ armor }, { openAge }] = await Promise.all([loadAge(), loadAgeFile()]);
      let file: Uint8Array;
      try {
        file = armor.decode(sealed);
      } catch (error) {
        throw new VaultError(`the sealed ${what} cannot be opened: ${(error as Error).message}`);
      }
      const opened = await openAge(file, found.identities);
      if ('value' in opened) return opened.value;
      throw new VaultError(
        'unmatched' in opened
          ? `the sealed ${what} cannot be opened with ${found.named}: it was sealed to other recipients`
          : `the sealed ${what} cannot be opened: ${opened.broken}`,
      );
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
