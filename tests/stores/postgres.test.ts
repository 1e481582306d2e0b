import { openPostgresStores } from '../../src/stores/postgres-store.ts';
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
