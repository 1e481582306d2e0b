import { addressText, certificateName } from '../keys/certificate-names.ts';
import type { KeyRead, KeyRefused } from '../keys/key-secret.ts';
import { type KeySecretKind, TLS_DAYS } from '../keys/kinds.ts';
import type { SecretDefinition } from '../model/catalog.ts';
import type { PublicHalf } from '../model/template.ts';
import type { Owners } from './steps/owners.ts';
import type { CertificateFile, RenewReason, Step } from './steps/step.ts';

/**
 * A key secret in a converge's plan: its steps (minted, kept, restored, rotated, renewed),
 * what stands in the way, and how its module's templates read it. Apart from the planner
 * of every secret (converge-plan.ts), as what a key is read as comes from a gathering of
 * its own (`KeysGathered`).
 */

/** What a key secret stands in the way with, as a value: the preview says it in words. */
export type KeyBlocker =
  /** The node's file at `path`, or the vault's value, is not a key of the secret's kind. */
  | {
      because: 'not-a-key';
      module: string;
      secret: string;
      path: string;
      kind: KeySecretKind;
      words: string;
      /** The vault's value, not the node's file (the definition changed its kind). */
      kept?: true;
    }
  /** A `tls` secret's key was found without a certificate berth can keep beside it. */
  | { because: 'certificate-refused'; module: string; secret: string; path: string; words: string }
  /** A `tls` secret's name, as the node's values and facts render it, is no name a certificate holds. */
  | { because: 'certificate-name'; module: string; secret: string; path: string; words: string }
  /** The node's key is another than the vault's. */
  | { because: 'secret-differs'; module: string; secret: string; path: string };

/**
 * Key secrets as a converge gathered them, by `module/secret`: each kept one read (opened),
 * each the machine holds read from its files, the rotations asked with the key each is to
 * place, and each `tls` secret's names rendered for the node.
 */
export interface KeysGathered {
  kept: ReadonlyMap<string, KeyRead | KeyRefused>;
  held: ReadonlyMap<string, KeyRead | KeyRefused>;
  /** `--rotate`: the secrets asked, and the key rotating for each (none at an act that has none). */
  rotate: ReadonlySet<string>;
  rotating: ReadonlyMap<string, KeyRead>;
  names: ReadonlyMap<string, string[]>;
}

/** How a module's templates read a key secret: as it is kept, rotated to, or not known until the act. */
export type KeyPlaced =
  | { known: { pem: string; half: PublicHalf; certificate?: string } }
  | { minted: true };

/** A key secret's steps, blockers, and what its templates read of it. */
export interface KeyPlan {
  steps: Step[];
  blockers: KeyBlocker[];
  placed?: KeyPlaced;
}

/** The half of a key a template places. */
export function halfOf(read: KeyRead): PublicHalf {
  return { publicPem: read.publicPem, jwk: JSON.stringify(read.jwk) };
}

function known(read: KeyRead): KeyPlaced {
  return {
    known: { pem: read.pem, half: halfOf(read), certificate: read.certificate?.pem },
  };
}

/** A name as certificates compare them: a DNS name lower-cased, an address as the URL standard writes it. */
function normalName(text: string): string {
  const name = certificateName(text);
  if ('refused' in name) return text;
  return 'dns' in name ? name.dns : addressText(name.ip);
}

/**
 * The steps of one key secret of a module: `held` is what its file on the node holds (if
 * anything), `kept` whether the vault keeps a value for it.
 */
export function keySecretPlan(
  gathered: KeysGathered,
  module: string,
  secret: string,
  spec: SecretDefinition & { kind: KeySecretKind },
  owners: Owners,
  { held, kept }: { held: boolean; kept: boolean },
): KeyPlan {
  const id = `${module}/${secret}`;
  const attributes = owners.secretFile(spec.path, spec);
  const blockers: KeyBlocker[] = [];
  const certificate = certificateFile(gathered, id, spec, owners, blockers, module, secret);
  if (blockers.length > 0) return { steps: [], blockers };
  const base = { module, secret, path: spec.path };

  const keptRead = kept ? gathered.kept.get(id) : undefined;
  if (kept && !keptRead)
    throw new Error(`berth planned ${id} without reading the key its vault keeps`);
  if (keptRead && 'refused' in keptRead)
    return {
      steps: [],
      blockers: [
        {
          because: 'not-a-key',
          ...base,
          kind: spec.kind,
          words: keptRead.refused.words,
          kept: true,
        },
      ],
    };
  const heldRead = held ? gathered.held.get(id) : undefined;
  const heldKid = heldRead && ('refused' in heldRead ? heldRead.refused.kid : heldRead.kid);
  if (keptRead && heldKid !== undefined && heldKid !== keptRead.kid)
    return { steps: [], blockers: [{ because: 'secret-differs', ...base }] };
  if (heldRead && 'refused' in heldRead) {
    // A key whose certificate is refused: the vault's certificate, kept with that very
    // key, is written again; without one, there is none to keep beside it.
    if (!(heldKid !== undefined && keptRead))
      return {
        steps: [],
        blockers: [
          heldKid !== undefined
            ? { because: 'certificate-refused', ...base, words: heldRead.refused.words }
            : { because: 'not-a-key', ...base, kind: spec.kind, words: heldRead.refused.words },
        ],
      };
  }
  const heldKey = heldRead && !('refused' in heldRead) ? heldRead : undefined;

  if (!keptRead && !held) {
    const key = { kind: spec.kind, ...(certificate ? { certificate } : {}) };
    return {
      steps: [{ do: 'mint', ...base, bytes: spec.bytes, key, ...attributes }],
      blockers: [],
      placed: { minted: true },
    };
  }
  const now = (keptRead ?? heldKey) as KeyRead;
  if (gathered.rotate.has(id)) {
    const next = gathered.rotating.get(id);
    const step: Step = {
      do: 'rotate',
      ...base,
      kind: spec.kind,
      keyKind: next?.keyKind ?? now.keyKind,
      // None rotating at an act: no key the preview named, and no digest to match.
      kid: next?.kid ?? '',
      was: now.kid,
      ...(certificate ? { certificate } : {}),
      ...attributes,
    };
    return { steps: [step], blockers: [], placed: next ? known(next) : { minted: true } };
  }
  const renewal = certificate && renewReason(now, certificate);
  if (certificate && renewal)
    return {
      steps: [{ do: 'renew', ...base, why: renewal, certificate, ...attributes }],
      blockers: [],
      placed: { minted: true },
    };
  if (!keptRead) {
    // Found on the node and not kept yet: read into the vault, with its certificate.
    const step: Step = {
      do: 'keep',
      ...base,
      kind: spec.kind,
      ...(certificate ? { certificate: { path: certificate.path } } : {}),
    };
    return { steps: [step], blockers: [], placed: known(now) };
  }
  if (!held) {
    const step: Step = {
      do: 'restore',
      ...base,
      ...(certificate ? { certificate } : {}),
      ...attributes,
    };
    return { steps: [step], blockers: [], placed: known(keptRead) };
  }
  // Held and kept alike: a certificate that differs from the vault's is written again.
  if (certificate && heldRead && ('refused' in heldRead || !sameCertificate(heldRead, keptRead)))
    return {
      steps: [{ do: 'restore', ...base, certificate, ...attributes }],
      blockers: [],
      placed: known(keptRead),
    };
  return { steps: [], blockers: [], placed: known(keptRead) };
}

function sameCertificate(a: KeyRead, b: KeyRead): boolean {
  const text = (read: KeyRead) => read.certificate?.pem.replace(/\s+/g, '');
  return text(a) === text(b);
}

/**
 * A `tls` secret's certificate file and what it is for: its names as rendered for the
 * node (a name that is none a certificate holds is a blocker), its lifetime; a public
 * file (0644 unless it is there with another mode), its owner and group the secret's.
 */
function certificateFile(
  gathered: KeysGathered,
  id: string,
  spec: SecretDefinition,
  owners: Owners,
  blockers: KeyBlocker[],
  module: string,
  secret: string,
): CertificateFile | undefined {
  if (spec.kind !== 'tls' || spec.cert === undefined) return undefined;
  const names = gathered.names.get(id) ?? [];
  for (const name of names) {
    const read = certificateName(name);
    if ('refused' in read)
      blockers.push({
        because: 'certificate-name',
        module,
        secret,
        path: spec.cert,
        words: read.refused,
      });
  }
  const attributes = owners.file(spec.cert, { owner: spec.owner, group: spec.group }, '0644');
  return { path: spec.cert, names, days: spec.days ?? TLS_DAYS, attributes };
}

/** Why a certificate is renewed now: due, or not for the names wanted; none when it stands. */
function renewReason(read: KeyRead, wanted: CertificateFile): RenewReason | undefined {
  const had = read.certificate;
  if (!had) return undefined;
  if (had.due) return { because: 'due', until: had.notAfter.toISOString() };
  if (!sameNames(had.names, wanted.names)) return { because: 'names', was: had.names };
  return undefined;
}

/** Whether a certificate's names are the names wanted, as certificates compare them. */
export function sameNames(had: readonly string[], wanted: readonly string[]): boolean {
  const have = new Set(had.map(normalName));
  const want = new Set(wanted.map(normalName));
  return have.size === want.size && [...want].every((name) => have.has(name));
}
