import type { CommandFunction } from './context.ts';

/**
 * Seals a node's kept values and fingerprint key again, to the recipients of now (a team
 * member added or removed): one write, journaled as one act. A value this identity
 * cannot open stays as it was, and is named, so nothing is lost.
 */
export const rekey: CommandFunction = async ({ node }, { store }) => {
  const { resealed, unopened } = await store.vault.reseal();
  const result = { command: 'rekey', node, resealed } as const;
  if (unopened.length === 0) return { result };
  return { result, refusal: { kind: 'rekey-unopened', code: 'vault_unopened', unopened } };
};
