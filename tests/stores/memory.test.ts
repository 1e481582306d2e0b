import { memoryStores } from '../../src/stores/memory-store.ts';
import { storeContract } from './contract.ts';

storeContract('memory', async ({ lockWaitMs, seal }) => {
  const stores = memoryStores({ lockWaitMs, seal });
  // Memory is the process's own: another opening is the same stores.
  return { stores, reopen: async () => stores, cleanup: async () => {} };
});
