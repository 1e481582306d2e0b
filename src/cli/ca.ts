import { stateCa } from '../keys/state-ca.ts';
import { enveloped } from '../result.ts';
import { VaultError } from '../vault/seal.ts';
import { stateDeps } from './deps.ts';
import { EXIT, type Io } from './io.ts';
import { readingFailed, vaultRefused } from './reading-failed.ts';
import { osUser } from './run-command.ts';

/**
 * `berth ca`: prints the state's CA certificate (PEM), for the clients that are to trust
 * the certificates it signs. A state with none gets one made first, as at any first need:
 * that seals its key to berth.json's recipients and needs no identity, and a CA kept
 * already is printed needing none at all (the certificate is public). Exits 0; 1 when
 * berth.json is not valid or the key cannot be sealed; 3 when the stores fail.
 */
export async function runCa(
  location: Parameters<typeof stateDeps>[0],
  json: boolean,
  io: Io,
): Promise<number> {
  const deps = stateDeps(location, io.env);
  try {
    await deps.stores.open();
    const { ca, made } = await stateCa(deps.stores, { actor: osUser(io), via: 'cli' });
    if (made) io.err("berth made the state's CA: it signs the certificates of tls secrets");
    io.out(
      json
        ? JSON.stringify(enveloped({ certificate: ca.certificate, at: ca.at, made }))
        : ca.certificate.trimEnd(),
    );
    return EXIT.done;
  } catch (error) {
    if (error instanceof VaultError) return vaultRefused(error, io, json);
    return readingFailed(error, io, { json });
  } finally {
    await deps.stores.close().catch(() => {});
  }
}
