import { openPostgresStores } from '../../src/stores/postgres-store.ts';
import {
  type PostgresServer,
  postgresUnavailable,
  startPostgres,
} from '../helpers/postgres-server.ts';
import { storeContract } from './contract.ts';

storeContract(
  'PostgreSQL',
  async ({ lockWaitMs }) => {
    let server: PostgresServer | undefined = await startPostgres();
    try {
      const url = server.url;
      return {
        stores: await openPostgresStores(url, { lockWaitMs }),
        reopen: () => openPostgresStores(url, { lockWaitMs }),
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
