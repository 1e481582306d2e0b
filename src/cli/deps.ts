import { userInfo } from 'node:os';
import type { ActDeps } from '../commands/act-shapes.ts';
import { ConfigError, type LoadConfig } from '../config/config.ts';
import { fileConfig } from '../config/file-config.ts';
import type { StateLocation } from '../config/state-dir.ts';
import { machinesOnFirstUse } from '../machines/machines-on-first-use.ts';
import { checkStoreUrl } from '../model/store-url.ts';
import { fileStores } from '../stores/file-store.ts';
import { StoreError, type Stores } from '../stores/stores.ts';
import { processSeal } from '../vault/process-seal.ts';
import type { Io } from './io.ts';

/**
 * What the act runner is given on this machine, by both faces: berth.json and the
 * catalog from the state directory, the stores they name (see `chosenStores`), and
 * machines picked from the inventory.
 */
export function stateDeps(
  location: StateLocation,
  env: Record<string, string | undefined> = process.env,
  storeOptions: { lockWaitMs?: number } = {},
): ActDeps {
  const loadConfig = fileConfig(location.dir);
  return {
    loadConfig,
    stores: chosenStores(location, loadConfig, env, storeOptions),
    machines: machinesOnFirstUse,
  };
}

/** Who acts on the command line: the OS user. */
export function osUser(io: Pick<Io, 'env'>): string {
  try {
    return userInfo().username;
  } catch {
    return io.env.USER ?? `uid ${process.getuid?.() ?? '?'}`;
  }
}

/** The deps over the state directory's own files, whatever berth.json says: for tests and benches. */
export function fileDeps(location: StateLocation): ActDeps {
  const loadConfig = fileConfig(location.dir);
  const seal = processSeal(process.env, async () => (await loadConfig([])).settings.recipients);
  return {
    loadConfig,
    stores: fileStores(location, { seal }),
    machines: machinesOnFirstUse,
  };
}

/** Where the records are kept: the state directory's files, or a PostgreSQL URL. */
type Choice = { kind: 'files' } | { kind: 'postgresql'; url: string; from: 'env' | 'settings' };

/**
 * The stores berth.json (or `$BERTH_STORE`, which wins) names. berth.json lives in the
 * state directory, and says where the rest of the records are; so the choice is made
 * when the stores are first used: `open` (or any read) reads the URL, then builds the
 * stores it names and hands every call to them. The PostgreSQL store is imported only
 * then, so a user of the state directory's files never loads a database driver.
 *
 * - A berth.json that cannot be read, or a `store` that is not a URL berth takes, is a
 *   ConfigError (the command refused: 409, exit 1); a `$BERTH_STORE` refused is a
 *   StoreError (503, exit 3), as it is no setting of the state. Neither says the URL.
 * - The choice stands for the life of the process. A berth api whose berth.json names
 *   another store meanwhile refuses acts until restarted, rather than write on in the
 *   store the rest of the team has left.
 */
export function chosenStores(
  location: StateLocation,
  loadConfig: LoadConfig,
  env: Record<string, string | undefined> = process.env,
  fileOptions: Parameters<typeof fileStores>[1] = {},
): Stores {
  let chosen: Promise<{ choice: Choice; stores: Stores }> | undefined;
  // Sealed to berth.json's recipients as they are at each seal: a team member added is
  // sealed to from the next act on.
  const seal =
    fileOptions.seal ?? processSeal(env, async () => (await loadConfig([])).settings.recipients);

  const choose = async (): Promise<Choice> => {
    const named = env.BERTH_STORE;
    if (named !== undefined && named !== '') {
      const refused = checkStoreUrl(named);
      if (refused) throw new StoreError(`$BERTH_STORE is refused: ${refused}`);
      return { kind: 'postgresql', url: named, from: 'env' };
    }
    const { settings } = await loadConfig([]).catch(async (error) => {
      // A state directory that cannot be used is said as such (503, exit 3), as the
      // state directory's stores say it, rather than as a berth.json that cannot be read.
      if (error instanceof ConfigError) await fileStores(location).open();
      throw error;
    });
    return settings.store === undefined
      ? { kind: 'files' }
      : { kind: 'postgresql', url: settings.store, from: 'settings' };
  };

  const build = async (choice: Choice): Promise<Stores> => {
    if (choice.kind === 'files') return fileStores(location, { ...fileOptions, seal });
    const { postgresStores } = await import('../stores/postgres-store.ts');
    return postgresStores(choice.url, { lockWaitMs: fileOptions.lockWaitMs, seal });
  };

  const resolved = async () => {
    chosen ??= choose().then(async (choice) => ({ choice, stores: await build(choice) }));
    const attempt = chosen;
    const made = await attempt.catch((error) => {
      // A berth.json mended, or a $BERTH_STORE, is read again at the next use.
      if (chosen === attempt) chosen = undefined;
      throw error;
    });
    return made;
  };

  /** The same store as chosen, still: berth.json may have been edited since. */
  const stillChosen = async ({ choice }: { choice: Choice }) => {
    if (choice.kind === 'postgresql' && choice.from === 'env') return;
    const { settings } = await loadConfig([]);
    const now = settings.store;
    const was = choice.kind === 'postgresql' ? choice.url : undefined;
    if (now !== was)
      throw new ConfigError(
        `the store in berth.json changed since this berth began (${was === undefined ? 'the state directory' : 'a PostgreSQL store'} then, ${now === undefined ? 'the state directory' : 'a PostgreSQL store'} now): restart it to use the new one`,
      );
  };

  return {
    async open() {
      const made = await resolved();
      await stillChosen(made);
      await made.stores.open();
    },
    openNode: async (node, act) => (await resolved()).stores.openNode(node, act),
    journalUnplaced: async (entry) => (await resolved()).stores.journalUnplaced(entry),
    listNodes: async () => (await resolved()).stores.listNodes(),
    readNode: async (node) => (await resolved()).stores.readNode(node),
    readJournal: async (query) => (await resolved()).stores.readJournal(query),
    readSurveys: async (nodes) => (await resolved()).stores.readSurveys(nodes),
    lockHolders: async (nodes) => (await resolved()).stores.lockHolders(nodes),
    readCa: async () => (await resolved()).stores.readCa(),
    keepCa: async (made) => (await resolved()).stores.keepCa(made),
    resealCa: async () => (await resolved()).stores.resealCa(),
    async close() {
      const made = await chosen?.catch(() => undefined);
      await made?.stores.close();
    },
  };
}
