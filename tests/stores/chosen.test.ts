import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chosenStores } from '../../src/cli/deps.ts';
import { fileConfig } from '../../src/config/file-config.ts';
import { storeContract } from './contract.ts';

// The stores both faces are given: chosen by berth.json, here its state directory's own
// files. Every call must reach the chosen store whole, arguments and all.
storeContract('a state directory, as berth.json chooses it', async ({ lockWaitMs, seal }) => {
  const dir = await mkdtemp(join(tmpdir(), 'berth-store-'));
  await writeFile(join(dir, 'berth.json'), '{"nodes": {}}');
  const location = { dir, createIfMissing: false };
  const open = () => chosenStores(location, fileConfig(dir), {}, { lockWaitMs, seal });
  return {
    stores: open(),
    reopen: async () => open(),
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});
