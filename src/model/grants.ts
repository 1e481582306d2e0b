import type { RefusalOf } from './refusal.ts';
import type { Settings } from './settings.ts';
import {
  ALL,
  type Atom,
  parseTarget,
  type ReadTarget,
  resolveTarget,
  type Targeted,
  targetCovers,
} from './targets.ts';

/**
 * Who may do what over the API. Without `grants` in berth.json every authenticated
 * subject may do everything; with it, a subject may run a command on a node only when
 * one of its grants names the command (or `*`) and its target takes in the node. The
 * command line is not asked: its user can edit berth.json.
 *
 * The refusal, or undefined when the subject may. `node` is in the inventory.
 */
export function grantRefusal(
  settings: Pick<Settings, 'grants' | 'groups'>,
  subject: string,
  command: string,
  node: string,
): RefusalOf<'not-granted'> | undefined {
  const { grants, groups } = settings;
  if (grants === undefined) return undefined;
  const granted = grants.some(
    (grant) =>
      grant.sub === subject &&
      (grant.may.includes('*') || grant.may.some((may) => may === command)) &&
      targetCovers(grant.on, node, groups),
  );
  if (granted) return undefined;
  return { kind: 'not-granted', code: 'not_granted', subject, command, target: node, what: 'it' };
}

/** A target resolved for a subject: a refusal `byGrants` is journaled as one, previews too. */
export type GrantedTarget =
  | Targeted
  | { ok: false; refusal: RefusalOf<'not-granted'>; byGrants: true };

/**
 * A target, read on the inventory, as a subject over the API may name it. One node is
 * asked of the grants alone, whatever the inventory said of it. Of a target of several,
 * the subject is told nothing of the inventory its grants for the command do not give it:
 * a name it is not given is refused in the same words whether berth.json has it or not,
 * with no hint at what was meant and no count. A subject granted every node is told what
 * the command line would be.
 */
export function grantedTarget(
  settings: Pick<Settings, 'grants' | 'groups' | 'nodes'>,
  subject: string,
  command: string,
  asked: ReadTarget,
): GrantedTarget {
  const { target, terms, targeted } = asked;
  if (terms === undefined || settings.grants === undefined) return targeted;
  const [first] = terms;
  const [only] = first?.all ?? [];
  if (terms.length === 1 && first?.all.length === 1 && only?.kind === 'node') {
    const refusal = grantRefusal(settings, subject, command, only.name);
    if (refusal) return { ok: false, refusal, byGrants: true };
    return targeted;
  }
  const inventory = { nodes: Object.keys(settings.nodes), groups: settings.groups };
  const given = givenTo(settings, subject, command, inventory);
  if (given.granted.size === inventory.nodes.length) return targeted;
  const refused = (what: RefusalOf<'not-granted'>['what']): GrantedTarget => ({
    ok: false,
    refusal: { kind: 'not-granted', code: 'not_granted', subject, command, target, what },
    byGrants: true,
  });
  const alone = terms.length === 1 && first?.all.length === 1;
  for (const term of terms) {
    // An intersection a grant names is given as such, though its groups may not be.
    if (term.all.length > 1 && given.intersections.has(intersectionText(term.all))) continue;
    for (const atom of term.all) {
      const seen = atom.kind === 'node' ? given.nodes.has(atom.name) : given.groups.has(atom.name);
      if (!seen) return refused(alone ? 'it' : { name: atomText(atom) });
    }
  }
  // Every name is one the subject was given, so only "names no node" is left to refuse.
  if (targeted.ok && targeted.nodes.some((node) => !given.granted.has(node)))
    return refused('every-node');
  return targeted;
}

/** A node or group as a target spells it. */
function atomText(atom: Atom): string {
  return atom.kind === 'node' ? atom.name : `@${atom.name}`;
}

/** An intersection in one spelling whatever its order: `@eu&@web` is `@web&@eu`. */
function intersectionText(atoms: readonly Atom[]): string {
  return atoms.map(atomText).sort().join('&');
}

/**
 * What a subject's grants for a command give it: the nodes they cover (`granted`), and
 * the names it may use in a target — every node and group its grants' targets name or
 * take in (`@all` among them only when they name it), and a group every node of which
 * is granted; and each intersection they name (`intersections`), with its nodes. Each
 * given group's members are given too, so what it is told of a target made of given names
 * comes from them alone.
 */
function givenTo(
  settings: Pick<Settings, 'grants' | 'groups'>,
  subject: string,
  command: string,
  inventory: { nodes: readonly string[]; groups: Settings['groups'] },
) {
  const granted = new Set<string>();
  const nodes = new Set<string>();
  const groups = new Set<string>();
  const intersections = new Set<string>();
  const takeIn = (group: string) => {
    if (groups.has(group)) return;
    groups.add(group);
    if (group === ALL) for (const node of inventory.nodes) nodes.add(node);
    for (const member of inventory.groups[group] ?? []) {
      if (member.startsWith('@')) takeIn(member.slice(1));
      else nodes.add(member);
    }
  };
  for (const grant of settings.grants ?? []) {
    if (grant.sub !== subject || !grant.may.some((may) => may === '*' || may === command)) continue;
    const targeted = resolveTarget(grant.on, inventory);
    if (targeted.ok) for (const node of targeted.nodes) granted.add(node);
    const terms = parseTarget(grant.on);
    if (!Array.isArray(terms)) continue;
    for (const term of terms) {
      const [atom] = term.all;
      if (term.all.length > 1) {
        // The nodes in all of several groups: those nodes, not the groups, whose other
        // members the grant does not give.
        intersections.add(intersectionText(term.all));
        const both = resolveTarget(term.all.map(atomText).join('&'), inventory);
        if (both.ok) for (const node of both.nodes) nodes.add(node);
      } else if (atom?.kind === 'node') nodes.add(atom.name);
      else if (atom) takeIn(atom.name);
    }
  }
  for (const group of Object.keys(inventory.groups)) {
    const members = resolveTarget(`@${group}`, inventory);
    if (members.ok && members.nodes.every((node) => granted.has(node))) groups.add(group);
  }
  return { granted, nodes, groups, intersections };
}
