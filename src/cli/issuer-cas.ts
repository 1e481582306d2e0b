import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { pemBlocks, pemOf } from '../keys/pem.ts';
import { type Stores, storesCannotOpen } from '../stores/stores.ts';
import { UsageError } from './io.ts';

/**
 * The certificates of `--issuer-ca FILE`, each checked at start: a file that cannot be
 * read, holds no PEM certificate, holds anything else (a private key beside it is never
 * what is meant), or a certificate that is not one or has expired, is refused in words.
 */
export function readIssuerCas(paths: readonly string[], now = new Date()): string[] {
  return paths.flatMap((path) => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const why =
        code === 'ENOENT'
          ? 'there is no such file'
          : code === 'EACCES'
            ? 'permission denied'
            : code === 'EISDIR'
              ? 'it is a directory'
              : (error as Error).message;
      throw new UsageError(`--issuer-ca ${path} cannot be read: ${why}`);
    }
    const blocks = pemBlocks(text);
    const other = blocks.find((block) => block.label !== 'CERTIFICATE');
    if (other)
      throw new UsageError(
        `--issuer-ca ${path} holds a ${other.label}: it takes CA certificates alone (PEM, BEGIN CERTIFICATE)`,
      );
    if (blocks.length === 0)
      throw new UsageError(
        `--issuer-ca ${path} holds no PEM certificate (BEGIN CERTIFICATE): it takes the certificate of the CA that signed the issuer's`,
      );
    return blocks.map((block, index) => {
      const pem = pemOf('CERTIFICATE', block.der);
      const which = blocks.length === 1 ? '' : ` (certificate ${index + 1})`;
      let certificate: X509Certificate;
      try {
        certificate = new X509Certificate(pem);
      } catch {
        throw new UsageError(`--issuer-ca ${path}${which} is not an X.509 certificate`);
      }
      if (Date.parse(certificate.validTo) < now.getTime())
        throw new UsageError(
          `--issuer-ca ${path}${which} expired on ${new Date(certificate.validTo).toISOString()}: a CA past its end signs nothing berth can trust`,
        );
      return pem;
    });
  });
}

/**
 * The state's CA certificate, to trust, read from the stores at each ask until one is
 * kept (a converge may make it after `berth api` began), then kept. A store that cannot be
 * read is said once, in the log, and trusts nothing more meanwhile.
 */
export function stateCaTrust(stores: Stores, log: (line: string) => void): () => Promise<string[]> {
  let found: string | undefined;
  let said = false;
  return async () => {
    if (found !== undefined) return [found];
    try {
      found = (await stores.readCa())?.certificate;
      said = false;
    } catch (error) {
      if (!said)
        log(`berth api: the state's CA cannot be trusted for now: ${storesCannotOpen(error)}`);
      said = true;
    }
    return found === undefined ? [] : [found];
  };
}
