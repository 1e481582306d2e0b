import { readFileSync } from 'node:fs';
import { rootCertificates } from 'node:tls';
import type { Agent as UndiciAgent } from 'undici-types';

/**
 * A fetch that trusts more certificate authorities than Node's fetch does by default:
 * Node's own roots, and those of NODE_EXTRA_CA_CERTS as Node reads them, and `more`. What
 * `berth api` fetches its issuer with: the state's CA and `--issuer-ca` are trusted
 * for it, and no variable need be set.
 *
 * Node's fetch is undici's, and takes undici's `dispatcher`; an Agent with `connect: { ca }`
 * is how undici is told whom to trust. Node 20 bundles undici but does not let it be
 * imported, and a second undici would be a dependency the size of the bundle's API chunk:
 * the Agent class is taken from the global dispatcher Node's fetch made for itself, which
 * undici keeps under a name shared across copies (`undici.globalDispatcher.1`).
 *
 * `more` is asked at each fetch, so a CA made after `berth api` began is trusted from its
 * next fetch on; a new agent is made only when what it answers changes.
 */
export function trustingFetch(more: () => Promise<readonly string[]>): typeof fetch {
  const Agent = nodeFetchAgent();
  const defaults = [...rootCertificates, ...extraCaCerts()];
  let made: { key: string; agent: UndiciAgent } | undefined;
  return async (input, init) => {
    const cas = await more();
    const key = cas.join('\n');
    if (made?.key !== key) {
      const was = made?.agent;
      made = { key, agent: new Agent({ connect: { ca: [...defaults, ...cas] } }) };
      // Requests in flight on the old one finish; it takes no new ones.
      void was?.close().catch(() => {});
    }
    return fetch(input, { ...init, dispatcher: made.agent } as RequestInit);
  };
}

type AgentClass = new (options: UndiciAgent.Options) => UndiciAgent;

/** The Agent class of the undici Node's fetch runs on. */
function nodeFetchAgent(): AgentClass {
  // Node loads its undici when a fetch global is first used; Response is one that fetches nothing.
  void globalThis.Response;
  const dispatcher = (globalThis as Record<symbol, unknown>)[
    Symbol.for('undici.globalDispatcher.1')
  ] as { constructor?: unknown } | undefined;
  const Agent = dispatcher?.constructor;
  if (typeof Agent !== 'function' || Agent.name !== 'Agent')
    throw new Error(
      "this Node's fetch has no undici Agent as its dispatcher: berth api cannot tell it whom to trust",
    );
  return Agent as AgentClass;
}

/**
 * The certificates of NODE_EXTRA_CA_CERTS, which Node adds to its roots at start: kept,
 * as an agent given its own `ca` would otherwise trust them no more. A file Node could not
 * read, Node warned of already; it adds nothing here either.
 */
function extraCaCerts(): string[] {
  const path = process.env.NODE_EXTRA_CA_CERTS;
  if (!path) return [];
  try {
    return readFileSync(path, 'utf8').match(CERTIFICATES) ?? [];
  } catch {
    return [];
  }
}

const CERTIFICATES = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
