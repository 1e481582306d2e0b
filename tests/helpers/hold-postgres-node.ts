/**
 * A controller that opens a node of a PostgreSQL store and holds it until it is killed:
 * `node --import tsx hold-postgres-node.ts URL NODE`. It prints `held` once it holds the
 * lock. For the tests of a controller that dies mid-act.
 */
import { openPostgresStores } from '../../src/stores/postgres-store.ts';

const [url = '', node = ''] = process.argv.slice(2);
const stores = await openPostgresStores(url, { host: 'doomed-controller' });
const opened = await stores.openNode(node, 'converge');
await opened.saveRecord({ assigned: ['held-by-the-doomed'], managed: {} });
process.stdout.write('held\n');
setInterval(() => {}, 60_000);
