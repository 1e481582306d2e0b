import {
  type Accounts,
  linkWords,
  type Machine,
  MachineError,
  type PathFacts,
  type SurveyPath,
} from '../machines/machine.ts';
import { accountNames, type ModuleDefinition } from '../model/catalog.ts';
import type { MachineFacts } from '../model/facts.ts';
import type { Holdings } from '../model/state.ts';
import type { PackageAsk, PackageFacts } from '../packages/packages.ts';
import { fingerprintWith } from '../utils/digest.ts';

/**
 * What a machine holds for one module: the holdings berth records (found or not, with
 * fingerprints) and, for planning, the facts and bytes they were made from. Bytes stay
 * in memory for the act; only fingerprints are ever kept.
 */
export interface ModuleSurvey {
  holdings: Holdings;
  /** Every path the module names, as the machine answered. */
  facts: ReadonlyMap<string, PathFacts>;
  /** The ids of the user and group names the definitions name, as the machine knows them. */
  accounts: Accounts;
  /** The node's packages, when the module names any: as its package manager knows them. */
  packages?: PackageFacts;
}

/** The paths a module's definition names: data to look at, secrets and files to read. */
function pathsOf(definition: ModuleDefinition): SurveyPath[] {
  return [
    ...definition.data.map(({ path }) => ({ path })),
    ...Object.values(definition.secrets).flatMap((secret) => [
      { path: secret.path, read: true },
      // A tls secret's certificate, beside its key.
      ...(secret.cert === undefined ? [] : [{ path: secret.cert, read: true }]),
    ]),
    ...Object.keys(definition.files).map((path) => ({ path, read: true })),
  ];
}

/**
 * Surveys a machine for every module given, in one call to the machine (one round trip
 * over ssh), and says what it holds for each; with `packages` (a converge), the packages
 * they name too. Data is "found" when it exists and is not empty; a secret when its file
 * exists and is not empty. A path berth may not read fails the survey, in words: what it
 * cannot see, it cannot plan for. `key` gives the node's fingerprint key, asked only when a
 * secret or file is found to fingerprint (opening it is an X25519 exchange). With `facts`,
 * what the machine tells of itself, in the same round trip.
 */
export async function surveyModules(
  machine: Machine,
  definitions: ReadonlyMap<string, ModuleDefinition>,
  key: () => Promise<Uint8Array>,
  {
    packages: withPackages = false,
    facts: withFacts = false,
  }: { packages?: boolean; facts?: boolean } = {},
): Promise<{ modules: Map<string, ModuleSurvey>; facts?: MachineFacts }> {
  const wanted = new Map<string, SurveyPath>();
  for (const definition of definitions.values()) {
    for (const asked of pathsOf(definition)) {
      const before = wanted.get(asked.path);
      wanted.set(asked.path, { path: asked.path, read: Boolean(before?.read || asked.read) });
    }
  }
  const users = new Set<string>();
  const groups = new Set<string>();
  for (const definition of definitions.values()) {
    const names = accountNames(definition);
    for (const name of names.users) users.add(name);
    for (const name of names.groups) groups.add(name);
  }
  const asks: PackageAsk[] = [...definitions]
    .filter(([, definition]) => withPackages && definition.packages.length > 0)
    .map(([module, definition]) => ({ module, packages: definition.packages }));
  const answer = await machine.survey(
    [...wanted.values()],
    { users: [...users].sort(), groups: [...groups].sort() },
    asks.length > 0 ? asks : undefined,
    ...(withFacts ? [{ facts: true }] : []),
  );
  const accounts = answer.accounts ?? { users: new Map(), groups: new Map() };
  const surveys = new Map<string, ModuleSurvey>();
  for (const [module, definition] of definitions) {
    const facts = new Map<string, PathFacts>();
    for (const { path } of pathsOf(definition)) {
      const fact = answer.get(path) ?? { kind: 'missing' };
      if (fact.kind === 'unreadable')
        throw new MachineError('denied', `${path} cannot be read: ${fact.reason}`);
      facts.set(path, fact);
    }
    const holdings = await holdingsOf(definition, facts, key);
    const packages = withPackages && definition.packages.length > 0 ? answer.packages : undefined;
    surveys.set(module, { holdings, facts, accounts, ...(packages ? { packages } : {}) });
  }
  return { modules: surveys, ...(withFacts ? { facts: answer.facts ?? {} } : {}) };
}

async function holdingsOf(
  definition: ModuleDefinition,
  facts: ReadonlyMap<string, PathFacts>,
  key: () => Promise<Uint8Array>,
): Promise<Holdings> {
  const holdings: Holdings = { data: [], secrets: {}, files: {} };
  for (const { path } of definition.data) {
    const fact = facts.get(path);
    const link = linkAt(facts, path);
    if (link) {
      holdings.data.push({ path, found: false, link });
      continue;
    }
    // There but empty is not found, and said so: an adopt tells it from a path not there.
    const empty =
      (fact?.kind === 'file' && fact.size === 0) || (fact?.kind === 'directory' && fact.empty);
    if (empty) holdings.data.push({ path, found: false, empty: true });
    else
      holdings.data.push({
        path,
        found: fact?.kind === 'other' || fact?.kind === 'file' || fact?.kind === 'directory',
      });
  }
  for (const [name, spec] of Object.entries(definition.secrets)) {
    // A link at a tls secret's certificate stands in the way as one at its key.
    const link =
      linkAt(facts, spec.path) ?? (spec.cert === undefined ? undefined : linkAt(facts, spec.cert));
    if (link) {
      holdings.secrets[name] = { path: spec.path, found: false, link };
      continue;
    }
    const value = secretHeld(facts, spec);
    const certificate = spec.cert === undefined ? undefined : bytesAt(facts, spec.cert);
    holdings.secrets[name] = value?.length
      ? {
          path: spec.path,
          found: true,
          fingerprint: await fingerprintWith(await key(), value),
          ...(certificate?.length
            ? { certificate: await fingerprintWith(await key(), certificate) }
            : {}),
        }
      : { path: spec.path, found: false };
  }
  for (const path of Object.keys(definition.files)) {
    const fact = facts.get(path);
    const content = bytesAt(facts, path);
    const link = linkAt(facts, path);
    if (link) holdings.files[path] = { found: false, link };
    else if (fact?.kind !== 'file') holdings.files[path] = { found: false };
    else
      holdings.files[path] = {
        found: true,
        // A file larger than berth reads is no configuration berth wrote: it differs.
        fingerprint: content
          ? await fingerprintWith(await key(), content)
          : `over ${fact.size} bytes`,
        mode: fact.mode,
      };
  }
  return holdings;
}

/** The words of a path berth will not follow, when the survey found one there. */
function linkAt(facts: ReadonlyMap<string, PathFacts>, path: string): string | undefined {
  const fact = facts.get(path);
  return fact?.kind === 'link' ? linkWords(path, fact) : undefined;
}

/** The bytes of a file the survey read, or undefined when it is not a file berth read. */
export function bytesAt(
  facts: ReadonlyMap<string, PathFacts>,
  path: string,
): Uint8Array | undefined {
  const fact = facts.get(path);
  return fact?.kind === 'file' ? fact.bytes : undefined;
}

/**
 * A secret's value as the machine holds it: its file's bytes, or for a secret inside a
 * file (`match`) the capture of its expression, multi-line; undefined when not there.
 */
export function secretHeld(
  facts: ReadonlyMap<string, PathFacts>,
  spec: { path: string; match?: string },
): Uint8Array | undefined {
  const bytes = bytesAt(facts, spec.path);
  if (!bytes || spec.match === undefined) return bytes;
  return secretInside(bytes, spec.match);
}

/** The capture of `match` in a file's text, as bytes; undefined when it does not match. */
export function secretInside(bytes: Uint8Array, match: string): Uint8Array | undefined {
  const found = new RegExp(match, 'm').exec(new TextDecoder().decode(bytes));
  const value = found?.[1];
  return value ? new TextEncoder().encode(value) : undefined;
}
