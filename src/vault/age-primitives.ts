/**
 * The primitives an age file is made of, behind one interface so that a host can give its
 * fastest: the standards' (Web Crypto's X25519, whose every call is a job on another
 * thread, and @noble's ciphers and hashes) on any runtime, and node:crypto's, synchronous,
 * in berth's Node process. The age format itself is written once, in age-file.ts.
 */

/** A peer's X25519 public key, made ready once for every exchange with it. */
export interface X25519Public {
  readonly bytes: Uint8Array;
}

/** An X25519 private key, with its own public key's bytes. */
export interface X25519Private {
  readonly publicKey: Uint8Array;
  /** The shared secret with `peer`; undefined when it is all zeros (a low-order point). */
  exchange(peer: X25519Public): Promise<Uint8Array | undefined>;
}

export interface AgePrimitives {
  /** Bytes from a cryptographically secure generator. */
  random(length: number): Uint8Array;
  /** A public key of 32 bytes, ready for exchanges. */
  x25519Public(bytes: Uint8Array): Promise<X25519Public>;
  /** The private key of a 32-byte scalar. */
  x25519Private(scalar: Uint8Array): Promise<X25519Private>;
  /** A new private key, for one file's ephemeral share. */
  x25519Generate(): Promise<X25519Private>;
  /** ChaCha20-Poly1305: the ciphertext with its 16-byte tag appended. */
  seal(key: Uint8Array, nonce: Uint8Array, plain: Uint8Array): Uint8Array;
  /** The plaintext, or undefined when the tag does not match. */
  open(key: Uint8Array, nonce: Uint8Array, sealed: Uint8Array): Uint8Array | undefined;
  /** HKDF over SHA-256; no salt is a salt of 32 zero bytes (RFC 5869). */
  hkdf(
    secret: Uint8Array,
    salt: Uint8Array | undefined,
    info: Uint8Array,
    length: number,
  ): Uint8Array;
  /** HMAC-SHA-256. */
  hmac(key: Uint8Array, data: Uint8Array): Uint8Array;
}

/**
 * A private key whose exchange is `derive` against the peer's key as these primitives made
 * it: a peer made by other primitives is refused, and an all-zero secret (a low-order
 * point, which some hosts refuse and others return) is none, as age has it.
 */
export function exchangingWith<PeerKey>(
  publicKey: Uint8Array,
  peers: WeakMap<X25519Public, PeerKey>,
  derive: (peer: PeerKey) => Promise<Uint8Array | undefined> | Uint8Array | undefined,
): X25519Private {
  return {
    publicKey,
    async exchange(peer) {
      const peerKey = peers.get(peer);
      if (peerKey === undefined) throw new Error('a public key made by other primitives');
      const shared = await derive(peerKey);
      return shared?.some((byte) => byte !== 0) ? shared : undefined;
    },
  };
}
