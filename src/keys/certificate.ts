/**
 * X.509 certificates on Web Crypto, made and read by PKI.js (`pkijs`, with its `asn1js`):
 * the state's CA certificate, a node's certificate signed by it, and a certificate found
 * on a node read back. PKI.js is a large library: import this file where a certificate is
 * first needed, never at a command's start.
 */

import { BitString, Integer, OctetString, PrintableString, Utf8String } from 'asn1js';
import {
  AltName,
  AttributeTypeAndValue,
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  Extension,
  ExtKeyUsage,
  GeneralName,
  type RelativeDistinguishedNames,
  Time,
} from 'pkijs';
import { addressText, type CertificateName, certificateName } from './certificate-names.ts';
import { mintKeyPair } from './key-pair.ts';
import { pemBlocks, pemOf } from './pem.ts';

/** A certificate and its private key, both PEM: the state's CA, or a node's `tls` secret. */
export interface CertifiedKey {
  certificate: string;
  /** PKCS #8 PEM. */
  key: string;
}

/** How long the state's CA is valid: long, as a CA trusted by hand is not changed often. */
const CA_DAYS = 3650;

/** Certificates begin a little before they are made, for clocks a little behind berth's. */
const BACKDATE_MS = 5 * 60_000;

const DAY_MS = 86_400_000;

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
};

/** keyUsage bits (RFC 5280 §4.2.1.3), first bit the most significant of the first byte. */
const DIGITAL_SIGNATURE = 0x80;
const KEY_CERT_SIGN = 0x04;
const CRL_SIGN = 0x02;

type Key = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

const EC_P256 = { name: 'ECDSA', namedCurve: 'P-256' };

/**
 * A new certificate authority for a state: an ec-p256 key, and its certificate, signed by
 * itself, valid for ten years, for signing certificates only (no intermediate under it).
 * Its name carries a random part, so two states' CAs are told apart where both are trusted.
 */
export async function makeCa(now = new Date()): Promise<CertifiedKey> {
  const pair = await mintKeyPair('ec-p256');
  const certificate = new Certificate();
  await setBasics(certificate, await importPublic(pair.publicPem), now, CA_DAYS * DAY_MS);
  const ski = await keyIdentifier(certificate);
  const tag = [...ski.slice(0, 4)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
  setName(certificate.subject, `berth CA ${tag}`);
  setName(certificate.issuer, `berth CA ${tag}`);
  certificate.extensions = [
    extension(OID.basicConstraints, true, new BasicConstraints({ cA: true, pathLenConstraint: 0 })),
    extension(
      OID.keyUsage,
      true,
      new BitString({ valueHex: new Uint8Array([KEY_CERT_SIGN | CRL_SIGN]), unusedBits: 1 }),
    ),
    extension(OID.subjectKeyIdentifier, false, new OctetString({ valueHex: ski })),
  ];
  await certificate.sign(await importPrivate(pair.pem), 'SHA-256');
  return { certificate: pemOfCertificate(certificate), key: pair.pem };
}

/** What a node's certificate is for, and for how long. */
export interface CertificateRequest {
  /** DNS names and IP addresses (a `tls` secret's `names`); the first is its common name. */
  names: readonly string[];
  days: number;
  now?: Date;
}

/**
 * A node's `tls` secret: a new ec-p256 key, and its certificate signed by `ca` for
 * `names`, valid for `days`, for a TLS server (and client). A name that is neither a DNS
 * name nor an address is refused (TypeError, in words): the definition's check says so
 * before.
 */
export async function issueCertificate(
  ca: CertifiedKey,
  request: CertificateRequest,
): Promise<CertifiedKey & { publicPem: string }> {
  const names = request.names.map((text) => {
    const name = certificateName(text);
    if ('refused' in name) throw new TypeError(name.refused);
    return name;
  });
  if (names.length === 0) throw new TypeError('a certificate needs at least one name');
  if (!Number.isInteger(request.days) || request.days < 1)
    throw new TypeError(
      `a certificate lives a whole number of days, at least 1, not ${request.days}`,
    );
  const issuer = certificateOf(ca.certificate);
  if (!issuer) throw new TypeError("the CA's certificate is not a PEM certificate");
  const signer = await importPrivate(ca.key);
  const pair = await mintKeyPair('ec-p256');
  const certificate = new Certificate();
  certificate.issuer = issuer.subject;
  const first = names[0] as CertificateName;
  const common = 'dns' in first ? first.dns : first.text;
  // A common name is at most 64 characters (RFC 5280's upper bound); the names are in
  // subjectAltName, which clients read, in any case.
  if (common.length <= 64) setName(certificate.subject, common);
  await setBasics(
    certificate,
    await importPublic(pair.publicPem),
    request.now ?? new Date(),
    request.days * DAY_MS,
  );
  certificate.extensions = [
    extension(OID.basicConstraints, false, new BasicConstraints({ cA: false })),
    extension(
      OID.keyUsage,
      true,
      new BitString({ valueHex: new Uint8Array([DIGITAL_SIGNATURE]), unusedBits: 7 }),
    ),
    extension(
      OID.extKeyUsage,
      false,
      new ExtKeyUsage({ keyPurposes: [OID.serverAuth, OID.clientAuth] }),
    ),
    extension(
      OID.subjectAltName,
      // Critical when the subject is empty, as RFC 5280 §4.2.1.6 asks.
      common.length > 64,
      new AltName({
        altNames: names.map((name) =>
          'dns' in name
            ? new GeneralName({ type: 2, value: name.dns })
            : new GeneralName({ type: 7, value: new OctetString({ valueHex: name.ip }) }),
        ),
      }),
    ),
    extension(
      OID.subjectKeyIdentifier,
      false,
      new OctetString({ valueHex: await keyIdentifier(certificate) }),
    ),
    extension(
      OID.authorityKeyIdentifier,
      false,
      new AuthorityKeyIdentifier({
        keyIdentifier: new OctetString({ valueHex: await keyIdentifier(issuer) }),
      }),
    ),
  ];
  await certificate.sign(signer, 'SHA-256');
  return { certificate: pemOfCertificate(certificate), key: pair.pem, publicPem: pair.publicPem };
}

/** A certificate as read back: what it is for, until when, and by whom. */
export interface CertificateRead {
  /** Its DNS names and addresses (subjectAltName), as a `tls` secret names them. */
  names: string[];
  notBefore: Date;
  notAfter: Date;
  /** The issuer's distinguished name, as words: `CN=berth CA 1a2b3c4d`. */
  issuer: string;
  subject: string;
  /** Its public key, SPKI PEM: the key it certifies, to compare with a key's. */
  publicPem: string;
}

/**
 * A certificate found on a node read back (the first of a chain), or why not, in words.
 */
export function readCertificate(pem: string): CertificateRead | { refused: string } {
  const certificate = certificateOf(pem);
  if (!certificate)
    return { refused: 'it holds no PEM certificate (BEGIN CERTIFICATE) that berth can read' };
  const names: string[] = [];
  for (const found of certificate.extensions ?? [])
    if (found.extnID === OID.subjectAltName && found.parsedValue instanceof AltName)
      for (const name of found.parsedValue.altNames)
        if (name.type === 2 && typeof name.value === 'string') names.push(name.value);
        else if (name.type === 7 && name.value instanceof OctetString)
          names.push(addressText(name.value.valueBlock.valueHexView));
  return {
    names,
    notBefore: certificate.notBefore.value,
    notAfter: certificate.notAfter.value,
    issuer: nameText(certificate.issuer),
    subject: nameText(certificate.subject),
    publicPem: pemOf('PUBLIC KEY', certificate.subjectPublicKeyInfo.toSchema().toBER(false)),
  };
}

/**
 * Whether a certificate is due for renewal: in the last third of its life (or past it),
 * as a `tls` secret's certificate is renewed by the next converge.
 */
export function renewalDue(
  certificate: Pick<CertificateRead, 'notBefore' | 'notAfter'>,
  now = new Date(),
): boolean {
  const life = certificate.notAfter.getTime() - certificate.notBefore.getTime();
  return now.getTime() >= certificate.notAfter.getTime() - life / 3;
}

/** Whether `ca`'s key signed the certificate: a certificate another CA signed is not the state's. */
export async function issuedBy(pem: string, ca: string): Promise<boolean> {
  const certificate = certificateOf(pem);
  const issuer = certificateOf(ca);
  if (!certificate || !issuer) return false;
  return certificate.verify(issuer).catch(() => false);
}

function certificateOf(pem: string): Certificate | undefined {
  const block = pemBlocks(pem).find((found) => found.label === 'CERTIFICATE');
  if (!block || block.der.length === 0) return undefined;
  try {
    return Certificate.fromBER(block.der);
  } catch {
    return undefined;
  }
}

function pemOfCertificate(certificate: Certificate): string {
  return pemOf('CERTIFICATE', certificate.toSchema(true).toBER(false));
}

function importPrivate(pem: string): Promise<Key> {
  const der = pemBlocks(pem)[0]?.der ?? new Uint8Array();
  return crypto.subtle.importKey('pkcs8', der, EC_P256, false, ['sign']);
}

function importPublic(publicPem: string): Promise<Key> {
  const der = pemBlocks(publicPem)[0]?.der ?? new Uint8Array();
  return crypto.subtle.importKey('spki', der, EC_P256, true, ['verify']);
}

/** Serial, validity and public key: what every certificate berth makes has alike. */
async function setBasics(certificate: Certificate, publicKey: Key, now: Date, lifeMs: number) {
  certificate.version = 2;
  const serial = crypto.getRandomValues(new Uint8Array(16));
  // Positive, and 16 bytes long: the first bit clear, the first byte not zero.
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  certificate.serialNumber = new Integer({ valueHex: serial });
  const from = new Date(now.getTime() - BACKDATE_MS);
  const until = new Date(now.getTime() + lifeMs);
  certificate.notBefore = timeOf(from);
  certificate.notAfter = timeOf(until);
  await certificate.subjectPublicKeyInfo.importKey(publicKey);
}

/** RFC 5280: UTCTime through 2049, GeneralizedTime from 2050; seconds, no fraction. */
function timeOf(date: Date): Time {
  const whole = new Date(Math.floor(date.getTime() / 1000) * 1000);
  return new Time({ type: whole.getUTCFullYear() < 2050 ? 0 : 1, value: whole });
}

function setName(name: RelativeDistinguishedNames, common: string) {
  name.typesAndValues = [
    new AttributeTypeAndValue({
      type: OID.commonName,
      value: /^[A-Za-z0-9 '()+,\-./:=?]*$/.test(common)
        ? new PrintableString({ value: common })
        : new Utf8String({ value: common }),
    }),
  ];
}

function nameText(name: RelativeDistinguishedNames): string {
  const short: Record<string, string> = { [OID.commonName]: 'CN', [OID.organization]: 'O' };
  return name.typesAndValues
    .map((item) => `${short[item.type] ?? item.type}=${item.value.valueBlock.value}`)
    .join(', ');
}

function extension(
  extnID: string,
  critical: boolean,
  value:
    | { toSchema(): { toBER(sizeOnly?: boolean): ArrayBuffer } }
    | { toBER(sizeOnly?: boolean): ArrayBuffer },
): Extension {
  const schema = 'toSchema' in value ? value.toSchema() : value;
  return new Extension({ extnID, critical, extnValue: schema.toBER(false) });
}

/**
 * A certificate's key identifier (RFC 5280 §4.2.1.2, method 1): the SHA-1 of its public
 * key's bits. A CA's own is read from it where it names one.
 */
async function keyIdentifier(certificate: Certificate): Promise<Uint8Array<ArrayBuffer>> {
  const named = certificate.extensions?.find((found) => found.extnID === OID.subjectKeyIdentifier);
  if (named?.parsedValue instanceof OctetString)
    return new Uint8Array(named.parsedValue.valueBlock.valueHexView);
  const bits = certificate.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView;
  return new Uint8Array(await crypto.subtle.digest('SHA-1', new Uint8Array(bits)));
}
