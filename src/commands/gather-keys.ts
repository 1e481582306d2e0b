import type { KeyRead } from '../keys/key-secret.ts';
import { isKeySecretKind, type KeySecretKind } from '../keys/kinds.ts';
import { keyValueBytes, rotatingName } from '../keys/secret-value.ts';
import type { ModuleDefinition } from '../model/catalog.ts';
import { type Readings, renderFor } from '../model/readings.ts';
import type { RefusalOf } from '../model/refusal.ts';
import { readsOf } from '../model/template.ts';
import { closest } from '../utils/did-you-mean.ts';
import { once } from '../utils/once.ts';
import type { CommandContext } from './context.ts';
import { SEALED } from './converge-plan.ts';
import { type KeysGathered, sameNames } from './key-plan.ts';
import { signingCa } from './state-ca.ts';
import { bytesAt, type ModuleSurvey } from './survey.ts';

/** What reads and makes keys: loaded only for a plan with a key secret (jose, PKI.js). */
const loadKeyReading = once(() => import('../keys/key-secret.ts'));
const loadMint = once(() => import('../keys/mint.ts'));

/** A `--rotate` that names no key secret of the node's modules. */
export type RotateRefusal = RefusalOf<'rotate-unknown' | 'rotate-not-a-key'>;

/** Each key secret of the modules, with its module and definition. */
function keySecrets(definitions: ReadonlyMap<string, ModuleDefinition>) {
  return [...definitions].flatMap(([module, definition]) =>
    Object.entries(definition.secrets).flatMap(([secret, spec]) =>
      isKeySecretKind(spec.kind)
        ? [{ module, secret, spec: { ...spec, kind: spec.kind as KeySecretKind } }]
        : [],
    ),
  );
}

/**
 * The secrets `--rotate` names, as `module/secret` of the node's modules (each module that
 * has a key secret of that name), or why one names none: no secret of that name, or only
 * random ones, which berth does not rotate.
 */
export function rotationsAsked(
  names: readonly string[],
  definitions: ReadonlyMap<string, ModuleDefinition>,
  node: string,
): Set<string> | RotateRefusal {
  const asked = new Set<string>();
  for (const name of names) {
    const having = [...definitions].filter(([, definition]) =>
      Object.hasOwn(definition.secrets, name),
    );
    if (having.length === 0) {
      const all = [...definitions.values()].flatMap((definition) =>
        Object.keys(definition.secrets),
      );
      const meant = closest(name, all);
      return {
        kind: 'rotate-unknown',
        code: 'rotate_unknown',
        name,
        node,
        ...(meant === undefined ? {} : { meant }),
      };
    }
    const keyed = having.filter(([, definition]) =>
      isKeySecretKind(definition.secrets[name]?.kind),
    );
    if (keyed.length === 0)
      return {
        kind: 'rotate-not-a-key',
        code: 'rotate_not_a_key',
        name,
        modules: having.map(([module]) => module),
      };
    for (const [module] of keyed) asked.add(`${module}/${name}`);
  }
  return asked;
}

/**
 * The key secrets of a converge's modules, gathered before it plans: each kept value read
 * (opened, so that a plan compares, renders and renews with it), each the machine holds read
 * from its files, each `tls` secret's names rendered for the node, and for `--rotate` the
 * key each secret asked rotates to: the one kept rotating in the vault since a preview
 * minted it, or, on a preview with none that fits, one minted now and kept so, sealed. An
 * act never mints one: it places the key its preview named, or none.
 */
export async function gatherKeys(
  definitions: ReadonlyMap<string, ModuleDefinition>,
  surveys: ReadonlyMap<string, ModuleSurvey>,
  vault: Map<string, Uint8Array | typeof SEALED>,
  readings: Readings,
  rotate: ReadonlySet<string>,
  { acting, context }: { acting: boolean; context: CommandContext },
): Promise<KeysGathered> {
  const secrets = keySecrets(definitions);
  const gathered = {
    kept: new Map<string, Awaited<ReturnType<typeof readKey>>>(),
    held: new Map<string, Awaited<ReturnType<typeof readKey>>>(),
    rotate,
    rotating: new Map<string, KeyRead>(),
    names: new Map<string, string[]>(),
  };
  if (secrets.length === 0) return gathered;
  const now = context.now();
  const { foundKeyValue } = await loadKeyReading();
  for (const { module, secret, spec } of secrets) {
    const id = `${module}/${secret}`;
    if (spec.names)
      gathered.names.set(
        id,
        spec.names.map((text) => renderFor(text, readings, module)),
      );
    let value = vault.get(id);
    if (value === SEALED) {
      // A key is read whenever it is kept: what the plan does with it depends on it.
      value = (await context.store.vault.get(module, secret))?.value;
      if (value) vault.set(id, value);
    }
    if (value instanceof Uint8Array) gathered.kept.set(id, await readKey(value, spec.kind, now));
    const facts = surveys.get(module)?.facts;
    const key = facts && bytesAt(facts, spec.path);
    if (facts && key?.length) {
      const certificate = spec.cert === undefined ? undefined : bytesAt(facts, spec.cert);
      gathered.held.set(
        id,
        await readKey(
          foundKeyValue(key, certificate?.length ? certificate : undefined),
          spec.kind,
          now,
        ),
      );
    }
  }
  for (const { module, secret, spec } of secrets) {
    const id = `${module}/${secret}`;
    if (!rotate.has(id) || !(gathered.kept.has(id) || gathered.held.has(id))) continue;
    const names = gathered.names.get(id);
    const kept = await context.store.vault.get(module, rotatingName(secret));
    const read = kept && (await readKey(kept.value, spec.kind, now));
    const fits =
      read &&
      !('refused' in read) &&
      (acting || names === undefined || sameNames(read.certificate?.names ?? [], names));
    if (fits) {
      gathered.rotating.set(id, read);
      vault.set(`${module}/${rotatingName(secret)}`, (kept as { value: Uint8Array }).value);
      continue;
    }
    if (acting) continue;
    const minted = await mintRotating(spec.kind, names, spec.days, context);
    await context.store.vault.put({
      module,
      secret: rotatingName(secret),
      entry: {
        value: minted,
        origin: `minted by berth to rotate ${secret}`,
        at: now.toISOString(),
      },
    });
    vault.set(`${module}/${rotatingName(secret)}`, minted);
    const made = await readKey(minted, spec.kind, now);
    if ('refused' in made)
      throw new Error(`berth cannot read the key it made: ${made.refused.words}`);
    gathered.rotating.set(id, made);
  }
  return gathered;
}

async function readKey(value: Uint8Array, kind: KeySecretKind, now: Date) {
  const { readKeySecret } = await loadKeyReading();
  return readKeySecret(value, kind, now);
}

/** A new key to rotate to, as the vault keeps it: for `tls`, with its certificate from the state's CA. */
async function mintRotating(
  kind: KeySecretKind,
  names: readonly string[] | undefined,
  days: number | undefined,
  context: CommandContext,
): Promise<Uint8Array> {
  const { mintKeySecret } = await loadMint();
  if (kind !== 'tls') return keyValueBytes((await mintKeySecret(kind)).pem);
  if (!context.ca) throw new Error("berth has no state's CA to sign a certificate with here");
  const minted = await mintKeySecret('tls', {
    ca: await signingCa(await context.ca.need()),
    names: names ?? [],
    ...(days === undefined ? {} : { days }),
    now: context.now(),
  });
  return keyValueBytes(minted.pem, minted.certificate);
}

/** The state's CA's certificate, when a template of the modules places it (`{{ca}}`). */
export async function caPlaced(
  definitions: ReadonlyMap<string, ModuleDefinition>,
  context: CommandContext,
): Promise<string | undefined> {
  const placing = [...definitions.values()].some((definition) =>
    Object.values(definition.files).some((file) => readsOf(file.content).ca),
  );
  if (!placing || !context.ca) return undefined;
  return (await context.ca.need()).certificate;
}
