import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { isName } from '../model/names.ts';
import { ownRecord } from '../utils/own-record.ts';
import { openingEach, type Seal } from '../vault/seal.ts';
import { readJson, refuseOpenVault } from './json-file.ts';
import type { NodeVault, Resealed } from './stores.ts';

/**
 * A node's `vault.json`, mode 0600. Sealed (`"sealed": "age"`): the fingerprint key and
 * every value are armored age files. An earlier berth's has no `sealed`, and holds them
 * in base64: it is sealed when first read (`sealVaultFile`).
 */
export const VaultFileSchema = v.object({
  sealed: v.optional(v.literal('age')),
  key: v.string(),
  /** By `module/secret`. */
  secrets: ownRecord(
    v.string(),
    v.object({ value: v.string(), origin: v.string(), at: v.string() }),
  ),
});
export type VaultFile = v.InferOutput<typeof VaultFileSchema>;

/** An earlier berth's vault file sealed, nothing lost: the same key and values, each sealed. */
export async function sealVaultFile(
  file: VaultFile,
  seal: Seal,
  fresh: () => Promise<boolean>,
): Promise<VaultFile> {
  if (file.sealed === 'age') return file;
  const entries = Object.entries(file.secrets);
  const plain = [file.key, ...entries.map(([, kept]) => kept.value)].map(
    (text) => new Uint8Array(Buffer.from(text, 'base64')),
  );
  const [key = '', ...values] = await seal.seal(plain, fresh);
  return {
    sealed: 'age',
    key,
    secrets: Object.fromEntries(
      entries.map(([name, kept], index) => [name, { ...kept, value: values[index] ?? '' }]),
    ),
  };
}

/** Reads a vault file, or undefined when the node has none. */
export async function readVaultFile(path: string): Promise<VaultFile | undefined> {
  await refuseOpenVault(path);
  return readJson(path, VaultFileSchema, () => undefined, { holdsSecrets: true });
}

/**
 * Whether no vault under `dir`'s nodes holds a sealed value: only then may berth make
 * itself an identity. Read only when berth has neither recipients nor an identity.
 */
export async function noSealedVault(nodesDir: string): Promise<boolean> {
  const names = await readdir(nodesDir).catch(() => [] as string[]);
  for (const name of names.filter(isName)) {
    const text = await readFile(join(nodesDir, name, 'vault.json'), 'utf8').catch(() => '{}');
    const sealed = (() => {
      try {
        return (JSON.parse(text) as { sealed?: unknown }).sealed !== undefined;
      } catch {
        return true; // A vault that cannot be read may hold sealed values.
      }
    })();
    if (sealed) return false;
  }
  return true;
}

/**
 * A node's vault, read on first use; a new one gets a fingerprint key of its own, sealed
 * at once. The new key is written before the first record or preview that may hold a
 * fingerprint made with it (`keepNewKey`), so an act refused before then writes nothing.
 * What is opened is kept for the act, so each value is opened once an act.
 */
export function fileVault(
  node: string,
  path: string,
  save: (data: string) => Promise<void>,
  seal: Seal,
  fresh: () => Promise<boolean>,
): NodeVault & { keepNewKey(): Promise<void> } {
  let file: VaultFile | undefined;
  let saved = false;
  let key: Uint8Array | undefined;
  const opened = new Map<string, Uint8Array>();

  const load = async () => {
    if (file) return file;
    const found = await readVaultFile(path);
    if (found === undefined) {
      key = crypto.getRandomValues(new Uint8Array(32));
      const [sealedKey = ''] = await seal.seal([key], fresh);
      file = { sealed: 'age', key: sealedKey, secrets: {} };
    } else if (found.sealed !== 'age') {
      // One copied in from an earlier berth after the state was upgraded.
      file = await sealVaultFile(found, seal, fresh);
      await save(JSON.stringify(file));
      saved = true;
    } else {
      file = found;
      saved = true;
    }
    return file;
  };
  const openValue = async (name: string, sealed: string) => {
    let value = opened.get(name);
    if (value === undefined) {
      const [module, secret] = name.split('/');
      value = await seal.open(sealed, `value of ${secret} of ${module} on ${node}`);
      opened.set(name, value);
    }
    return value.slice();
  };

  return {
    async fingerprintKey() {
      const sealedKey = (await load()).key;
      key ??= await seal.open(sealedKey, `fingerprint key of ${node}`);
      return key.slice();
    },
    async keepNewKey() {
      if (file === undefined || saved) return;
      await save(JSON.stringify(file));
      saved = true;
    },
    async get(module, secret) {
      const kept = (await load()).secrets[`${module}/${secret}`];
      if (!kept) return undefined;
      return {
        value: await openValue(`${module}/${secret}`, kept.value),
        origin: kept.origin,
        at: kept.at,
      };
    },
    async kept() {
      return Object.keys((await load()).secrets).map((name) => {
        const [module = '', secret = ''] = name.split('/');
        return { module, secret };
      });
    },
    async all(modules) {
      const kept = Object.entries((await load()).secrets).filter(
        ([name]) => !modules || modules.has(name.split('/')[0] ?? ''),
      );
      const values = await Promise.all(kept.map(([name, { value }]) => openValue(name, value)));
      return kept.map(([name], index) => {
        const [module = '', secret = ''] = name.split('/');
        return { module, secret, value: values[index] as Uint8Array };
      });
    },
    async put(...kept) {
      if (kept.length === 0) return;
      const vault = await load();
      const sealed = await seal.seal(
        kept.map((item) => item.entry.value),
        fresh,
      );
      const next: VaultFile = { sealed: 'age', key: vault.key, secrets: { ...vault.secrets } };
      kept.forEach(({ module, secret, entry }, index) => {
        next.secrets[`${module}/${secret}`] = {
          value: sealed[index] ?? '',
          origin: entry.origin,
          at: entry.at,
        };
      });
      await save(JSON.stringify(next));
      file = next;
      saved = true;
      for (const { module, secret, entry } of kept)
        opened.set(`${module}/${secret}`, entry.value.slice());
    },
    async drop(...names) {
      const vault = await load();
      const gone = names.map(({ module, secret }) => `${module}/${secret}`);
      if (!gone.some((name) => Object.hasOwn(vault.secrets, name))) return;
      const secrets = { ...vault.secrets };
      for (const name of gone) {
        delete secrets[name];
        opened.delete(name);
      }
      const next: VaultFile = { sealed: 'age', key: vault.key, secrets };
      await save(JSON.stringify(next));
      file = next;
      saved = true;
    },
    async reseal() {
      const vault = await load();
      const names = Object.keys(vault.secrets);
      const { unopened, tryOpen } = openingEach();
      const keyValue = await tryOpen(`the fingerprint key of ${node}`, async () => {
        key ??= await seal.open(vault.key, `fingerprint key of ${node}`);
        return key;
      });
      const values: (Uint8Array | undefined)[] = [];
      for (const name of names) {
        const [module, secret] = name.split('/');
        values.push(
          await tryOpen(`${secret} of ${module} on ${node}`, () =>
            openValue(name, vault.secrets[name]?.value ?? ''),
          ),
        );
      }
      const toSeal = [keyValue, ...values].filter((value) => value !== undefined);
      const sealed = await seal.seal(toSeal, async () => false);
      let at = 0;
      const next: VaultFile = {
        sealed: 'age',
        key: keyValue === undefined ? vault.key : (sealed[at++] ?? ''),
        secrets: { ...vault.secrets },
      };
      names.forEach((name, index) => {
        const kept = vault.secrets[name];
        if (kept && values[index] !== undefined)
          next.secrets[name] = { ...kept, value: sealed[at++] ?? '' };
      });
      if (toSeal.length > 0) await save(JSON.stringify(next));
      file = next;
      saved = true;
      return { resealed: toSeal.length, unopened } satisfies Resealed;
    },
  };
}
