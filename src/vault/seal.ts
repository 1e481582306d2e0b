/**
 * Sealing the vault's values with age: each value one armored age file, sealed to the
 * recipients of berth.json (else to berth's own identity), opened with berth's identity.
 * Standards only (age-encryption works on Web Crypto), and the library is imported when
 * a value is first sealed or opened, so a command that touches none never loads it.
 */

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

type Age = typeof import('age-encryption');
/** What age's Decrypter takes as an identity: its text, or a Web Crypto key. */
type AgeIdentity = Parameters<InstanceType<Age['Decrypter']>['addIdentity']>[0];
let age: Promise<Age> | undefined;
const loadAge = () => {
  age ??= import('age-encryption');
  return age;
};

/** A PKCS #8 X25519 private key is this prefix and the key's 32 bytes (RFC 8410). */
const PKCS8_X25519 = [
  0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x6e, 0x04, 0x22, 0x04, 0x20,
];

/**
 * An identity imported once as a Web Crypto key: given as text, age imports it again for
 * every value it opens, which costs more than the opening itself (a converge opens a
 * hundred). A host whose Web Crypto lacks X25519 gets the text, which age handles alone.
 */
async function asCryptoKey(identity: string): Promise<AgeIdentity> {
  try {
    const { bech32 } = await import('@scure/base');
    const { bytes } = bech32.decodeToBytes(identity.toLowerCase(), false);
    if (bytes.length !== 32) return identity;
    return await crypto.subtle.importKey(
      'pkcs8',
      new Uint8Array([...PKCS8_X25519, ...bytes]),
      { name: 'X25519' },
      false,
      ['deriveBits'],
    );
  } catch {
    return identity;
  }
}

/** The identities an identity file holds: its lines that are not comments. */
export function identitiesIn(text: string): string[] {
  return text
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

const looked = (found: { looked: readonly string[] }) => found.looked.join(', ');

/** The age seal over `keys`. Encrypters and the identity are kept for the process. */
export function ageSeal(keys: Keys): Seal {
  let encrypter: { to: string; made: Promise<InstanceType<Age['Encrypter']>> } | undefined;
  let opener: Promise<{ named: string; decrypter: InstanceType<Age['Decrypter']> }> | undefined;

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
    const { Decrypter } = await loadAge();
    const decrypter = new Decrypter();
    for (const line of own.lines) decrypter.addIdentity(await asCryptoKey(line));
    return { named: own.named, decrypter };
  };

  return {
    async seal(values, fresh) {
      if (values.length === 0) return [];
      const to = await recipients(fresh);
      const key = to.join(' ');
      if (encrypter?.to !== key) {
        const made = loadAge().then(({ Encrypter }) => {
          const made = new Encrypter();
          for (const recipient of to) made.addRecipient(recipient);
          return made;
        });
        encrypter = { to: key, made };
      }
      const [{ armor }, sealer] = await Promise.all([loadAge(), encrypter.made]);
      return Promise.all(values.map(async (value) => armor.encode(await sealer.encrypt(value))));
    },
    async open(sealed, what) {
      // A missing identity is looked for again next time; a found one is kept.
      const attempt = opener ?? openWith();
      const found = await attempt;
      if (!('decrypter' in found))
        throw new VaultError(
          `berth needs its age identity to open the sealed ${what}, and found none: it looked at ${looked(found)}`,
          { noIdentity: true },
        );
      opener = attempt as typeof opener;
      const { armor } = await loadAge();
      try {
        return await found.decrypter.decrypt(armor.decode(sealed));
      } catch (error) {
        const why = (error as Error).message;
        throw new VaultError(
          /no identity matched/i.test(why)
            ? `the sealed ${what} cannot be opened with ${found.named}: it was sealed to other recipients`
            : `the sealed ${what} cannot be opened: ${why}`,
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
