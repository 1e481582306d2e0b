import { didYouMean, withHint } from './did-you-mean.ts';
import { checkName, isName } from './names.ts';

/**
 * Targets: where a command takes a node, a node (`web1`), a group (`@web`), every node
 * (`@all`), or a comma-separated list of them where `!name` and `!@group` remove nodes
 * (`@web,!web3`). The nodes of the terms that add, less those of the terms that remove,
 * whatever their order.
 */

/** berth.json's `groups`: each a list of nodes and other groups (`@name`). */
export type Groups = Readonly<Record<string, readonly string[]>>;

/** `@all` is every node of the inventory, so no group may take that name. */
export const ALL = 'all';

/** A target as nodes: the sorted node names, or why it names none, in words. */
export type Targeted = { ok: true; nodes: string[] } | { ok: false; refused: string };

/** A part of a target: a node or a group, which adds nodes or (`!`) removes them. */
export type Term = { remove: boolean } & (
  | { kind: 'node'; name: string }
  | { kind: 'group'; name: string }
);

/** The target's terms, or the words of the first that is not one. */
export function parseTarget(target: string): Term[] | string {
  if (target === '') return 'node is needed';
  const terms: Term[] = [];
  for (const part of target.split(',')) {
    const remove = part.startsWith('!');
    const rest = remove ? part.slice(1) : part;
    const group = rest.startsWith('@');
    const name = group ? rest.slice(1) : rest;
    if (name === '')
      return `${JSON.stringify(target)} is not a target: each part is a node, @group or @all, and ! before one removes it`;
    if (group) {
      if (!isName(name))
        return `${JSON.stringify(`@${name}`)} is not a group: group names are 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit`;
      terms.push({ remove, kind: 'group', name });
    } else {
      const refused = checkName('node', name);
      if (refused) return refused;
      terms.push({ remove, kind: 'node', name });
    }
  }
  if (terms.every((term) => term.remove))
    return `${JSON.stringify(target)} names only nodes to remove: name the nodes or groups to take them from`;
  return terms;
}

/** Whether a target is spelt as one (its names are not looked up): for berth.json's schema. */
export function targetSyntaxProblem(target: string): string | undefined {
  const parsed = parseTarget(target);
  return typeof parsed === 'string' ? parsed : undefined;
}

/** The nodes of a group, through the groups it names; berth.json was checked for cycles. */
function membersOf(group: string, groups: Groups, seen = new Set<string>()): Set<string> {
  const nodes = new Set<string>();
  if (seen.has(group)) return nodes;
  seen.add(group);
  for (const member of groups[group] ?? []) {
    if (member.startsWith('@'))
      for (const node of membersOf(member.slice(1), groups, seen)) nodes.add(node);
    else nodes.add(member);
  }
  return nodes;
}

function hasGroup(groups: Groups, name: string): boolean {
  return name === ALL || Object.hasOwn(groups, name);
}

/** Turns a target into the nodes it names, on the inventory. */
export function resolveTarget(
  target: string,
  inventory: { nodes: readonly string[]; groups: Groups },
): Targeted {
  const terms = parseTarget(target);
  if (typeof terms === 'string') return { ok: false, refused: terms };
  const known = new Set(inventory.nodes);
  const added = new Set<string>();
  const removed = new Set<string>();
  for (const term of terms) {
    const into = term.remove ? removed : added;
    if (term.kind === 'node') {
      if (!known.has(term.name))
        return {
          ok: false,
          refused: withHint(
            `berth does not know node ${term.name}`,
            didYouMean(term.name, known),
            'add it under nodes in berth.json',
            'else add it under nodes in berth.json',
          ),
        };
      into.add(term.name);
    } else if (!hasGroup(inventory.groups, term.name)) {
      const meant = didYouMean(`@${term.name}`, [
        ...Object.keys(inventory.groups).map((group) => `@${group}`),
        `@${ALL}`,
      ]);
      return { ok: false, refused: `berth.json has no group ${term.name}${meant}` };
    } else {
      const nodes = term.name === ALL ? known : membersOf(term.name, inventory.groups);
      for (const node of nodes) into.add(node);
    }
  }
  const nodes = [...added].filter((node) => !removed.has(node)).sort();
  if (nodes.length === 0) return { ok: false, refused: `${target} names no node` };
  return { ok: true, nodes };
}

/**
 * Whether a target takes in one node of the inventory: what a grant asks, with no need of
 * the rest of the inventory (an act on one node of a large one reads that node alone).
 * A name the target does not know takes in nothing.
 */
export function targetCovers(target: string, node: string, groups: Groups): boolean {
  const terms = parseTarget(target);
  if (typeof terms === 'string') return false;
  const takesIn = (term: Term) =>
    term.kind === 'node'
      ? term.name === node
      : term.name === ALL ||
        (Object.hasOwn(groups, term.name) && membersOf(term.name, groups).has(node));
  return (
    terms.some((term) => !term.remove && takesIn(term)) &&
    !terms.some((term) => term.remove && takesIn(term))
  );
}

/**
 * What is wrong with berth.json's groups, on its whole inventory, in words: a member that
 * is neither a node nor a group, or a group that takes itself in.
 */
export function groupsProblem(groups: Groups, nodes: readonly string[]): string | undefined {
  const known = new Set(nodes);
  for (const [group, members] of Object.entries(groups)) {
    for (const member of members) {
      const name = member.startsWith('@') ? member.slice(1) : member;
      if (member.startsWith('@') ? !Object.hasOwn(groups, name) : !known.has(name))
        return `groups.${group} names ${member}, which is neither a node nor a group`;
    }
  }
  // A cycle: depth first, a group met again while it is still being walked.
  const walking = new Set<string>();
  const walked = new Set<string>();
  const walk = (group: string, path: string[]): string | undefined => {
    if (walking.has(group)) {
      const cycle = [...path.slice(path.indexOf(group)), group].map((name) => `@${name}`);
      return `groups.${group} takes itself in: ${cycle.join(' → ')}`;
    }
    if (walked.has(group)) return undefined;
    walking.add(group);
    for (const member of groups[group] ?? []) {
      if (!member.startsWith('@')) continue;
      const found = walk(member.slice(1), [...path, group]);
      if (found) return found;
    }
    walking.delete(group);
    walked.add(group);
    return undefined;
  };
  for (const group of Object.keys(groups)) {
    const found = walk(group, []);
    if (found) return found;
  }
  return undefined;
}
