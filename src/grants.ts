import type { Settings } from './settings.ts';
import { targetCovers } from './targets.ts';

/**
 * Who may do what over the API. Without `grants` in berth.json every authenticated
 * subject may do everything; with it, a subject may run a command on a node only when
 * one of its grants names the command (or `*`) and its target takes in the node. The
 * command line is not asked: its user can edit berth.json.
 *
 * The refusal in words, or undefined when the subject may. `node` is in the inventory.
 */
export function grantRefusal(
  settings: Pick<Settings, 'grants' | 'groups'>,
  subject: string,
  command: string,
  node: string,
): string | undefined {
  const { grants, groups } = settings;
  if (grants === undefined) return undefined;
  const granted = grants.some(
    (grant) =>
      grant.sub === subject &&
      (grant.may.includes('*') || grant.may.some((may) => may === command)) &&
      targetCovers(grant.on, node, groups),
  );
  if (granted) return undefined;
  return `${subject} may not ${command} ${node}: no grant names it`;
}
