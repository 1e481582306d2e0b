import { memoryStores } from '../../src/stores/memory-store.ts';
import { storeContract } from './contract.ts';

storeContract('memory', async ({ lockWaitMs }) => {
  const stores = memoryStores({ lockWaitMs });
  // Memory is the process's own: another opening is the same stores.
  return { stores, reopen: async () => stores, cleanup: async () => {} };
});
