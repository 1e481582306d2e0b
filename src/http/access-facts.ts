/**
 * What a request's access-log line says beyond its request line and status: who asked
 * (the token's subject, once verified) and which node, as the app learns them. Never a
 * token, a body, or anything else the request carried.
 */
export interface AccessFacts {
  subject?: string;
  node?: string;
}

const FACTS = Symbol('berth.accessFacts');
type Carrier = { [FACTS]?: AccessFacts };

/**
 * Leaves facts where the server that logs the request finds them: on Node's request,
 * which the Node adapter hands the app as `env.incoming`. Elsewhere (Deno) there is no
 * such env, and nothing is noted.
 */
export function noteAccess(env: unknown, facts: AccessFacts): void {
  const incoming = (env as { incoming?: Carrier } | undefined)?.incoming;
  if (!incoming) return;
  const noted = incoming[FACTS];
  if (noted) Object.assign(noted, facts);
  else incoming[FACTS] = { ...facts };
}

/** The facts the app noted on a request, if any. */
export function accessFactsOf(incoming: object): AccessFacts | undefined {
  return (incoming as Carrier)[FACTS];
}
