import { openPostgresStores } from '../../src/stores/postgres-store.ts';
import { journalKeys, parseJournalLine } from '../../src/stores/stores.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { storeContract } from './contract.ts';

storeContract(
  'PostgreSQL',
  async ({ lockWaitMs, seal }) => {
    let server: PostgresServer | undefined = await startPostgres();
    try {
      const url = server.url;
      return {
        stores: await openPostgresStores(url, { lockWaitMs, seal }),
        reopen: () => openPostgresStores(url, { lockWaitMs, seal }),
        // A line as schema version 7 kept it, keyed; the store is at this berth's version
        // since (postgres-schema.test.ts upgrades one from version 7 itself).
        async writtenBefore(node, line) {
          const { at, about } = journalKeys(parseJournalLine(line, ''), node, '');
          await server?.admin(
            'INSERT INTO berth_journal (node, line, at, about) VALUES ($1, $2, $3, $4)',
            [node, line, at, about],
            url,
          );
        },
        cleanup: async () => {
          await server?.stop();
          server = undefined;
        },
      };
    } catch (error) {
      await server.stop();
      throw error;
    }
  },
  postgresUnavailable(),
);
