import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileStores } from '../../src/stores/file-store.ts';
import { storeContract } from './contract.ts';

storeContract('a state directory', async ({ lockWaitMs }) => {
  const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
  const location = { dir, createIfMissing: false };
  return {
    stores: fileStores(location, { lockWaitMs }),
    reopen: async () => fileStores(location, { lockWaitMs }),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
