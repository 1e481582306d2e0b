import { closest, withHint } from '../utils/did-you-mean.ts';
import { ownValue } from '../utils/own-record.ts';
import { isName, nameWords } from './names.ts';
import type { TargetRefusal } from './target-refusal.ts';

/**
 * Targets: where a command takes a node, a node (`web1`), a group (`@web`), every node
 * (`@all`), the nodes in all of several joined by `&` (`@web&@eu`), or a comma-separated
 * list of them where `!` before a part removes its nodes (`@web,!web3`, `@all,!@web&@eu`).
 * The nodes of the parts that add, less those of the parts that remove, whatever their
 * order.
 */

/** berth.json's `groups`: each a list of nodes and other groups (`@name`). */
export type Groups = Readonly<Record<string, readonly string[]>>;

/** `@all` is every node of the inventory, so no group may take that name. */
export const ALL = 'all';

/** What a target is read on: the nodes of berth.json (or of the records) and its groups. */
export interface Inventory {
  nodes: readonly string[];
  groups: Groups;
}

/** A target as nodes: the sorted node names, or why it names none. */
export type Targeted = { ok: true; nodes: string[] } | { ok: false; refusal: TargetRefusal };

/** A node or a group, as a target names it. */
export type Atom = { kind: 'node'; name: string } | { kind: 'group'; name: string };

/**
 * A part of a target: the nodes in every one of its atoms (one, or several joined by `&`),
 * which it adds or (`!`) removes.
 */
export type Term = { remove: boolean; all: Atom[] };

/** Why a target is not one: a name that breaks the naming rule, or the target's shape. */
type TargetProblem = Extract<TargetRefusal, { kind: 'name' | 'group-name' | 'target-shape' }>;

/** The target's terms, or why the first that is not one is not. */
export function parseTarget(target: string): Term[] | TargetProblem {
  const shape = (kind: 'empty' | 'part' | 'only-removes'): TargetProblem => ({
    kind: 'target-shape',
    code: 'invalid_target',
    target,
    shape: kind,
  });
  if (target === '') return shape('empty');
  const terms: Term[] = [];
  for (const part of target.split(',')) {
    const remove = part.startsWith('!');
    const all: Atom[] = [];
    for (const atom of (remove ? part.slice(1) : part).split('&')) {
      const group = atom.startsWith('@');
      const name = group ? atom.slice(1) : atom;
      if (name === '' || name.startsWith('!')) return shape('part');
      if (!isName(name))
        return group
          ? { kind: 'group-name', code: 'invalid_name', given: name }
          : { kind: 'name', code: 'invalid_name', of: 'node', given: name };
      all.push({ kind: group ? 'group' : 'node', name });
    }
    terms.push({ remove, all });
  }
  if (terms.every((term) => term.remove)) return shape('only-removes');
  return terms;
}

/** Whether a target is spelt as one (its names are not looked up): for berth.json's schema. */
export function targetSyntaxProblem(target: string): string | undefined {
  const parsed = parseTarget(target);
  return Array.isArray(parsed) ? undefined : targetRefusalWords(parsed);
}

/**
 * A target's refusal in words: the command line's, the API's and berth.json's own checks
 * (which read a target where no renderer of commands reaches) alike.
 */
export function targetRefusalWords(refusal: TargetRefusal): string {
  switch (refusal.kind) {
    case 'name':
      return nameWords(refusal.of, refusal.given);
    case 'group-name':
      return `${JSON.stringify(`@${refusal.given}`)} is not a group: group names are 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit`;
    case 'target-shape':
      if (refusal.shape === 'empty') return 'node is needed';
      return refusal.shape === 'part'
        ? `${JSON.stringify(refusal.target)} is not a target: each part is a node, @group or @all, or several joined by & (the nodes in all of them), and ! before a part removes it`
        : `${JSON.stringify(refusal.target)} names only nodes to remove: name the nodes or groups to take them from`;
    case 'target-empty':
      return `${refusal.target} names no node`;
    case 'unknown-node':
      return withHint(
        `berth does not know node ${refusal.node}`,
        refusal.meant === undefined ? '' : `; did you mean ${refusal.meant}?`,
        'add it under nodes in berth.json',
        'else add it under nodes in berth.json',
      );
    case 'unknown-group':
      return `berth.json has no group ${refusal.group}${refusal.meant === undefined ? '' : `; did you mean ${refusal.meant}?`}`;
  }
}

/**
 * The nodes of a group, through the groups it names, each group walked once: by a list of
 * groups still to walk, not by recursion, so that no chain of groups is too deep.
 */
function membersOf(group: string, groups: Groups): Set<string> {
  const nodes = new Set<string>();
  const seen = new Set<string>([group]);
  const pending = [group];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    for (const member of ownValue(groups, name) ?? []) {
      if (!member.startsWith('@')) nodes.add(member);
      else if (!seen.has(member.slice(1))) {
        seen.add(member.slice(1));
        pending.push(member.slice(1));
      }
    }
  }
  return nodes;
}

/**
 * Each node's groups: the groups whose members, through the groups they name, hold it,
 * sorted. Walked up from each node, by the groups that name it, each group once a node:
 * what it costs is what it finds, however deep the groups.
 */
export function groupsHolding(groups: Groups): Map<string, string[]> {
  const namedBy = new Map<string, string[]>();
  for (const [group, members] of Object.entries(groups)) {
    for (const member of members) {
      const naming = namedBy.get(member);
      if (naming) naming.push(group);
      else namedBy.set(member, [group]);
    }
  }
  const holding = new Map<string, string[]>();
  for (const node of namedBy.keys()) {
    if (node.startsWith('@')) continue;
    const found = new Set<string>();
    const pending = [...(namedBy.get(node) ?? [])];
    for (let group = pending.pop(); group !== undefined; group = pending.pop()) {
      if (found.has(group)) continue;
      found.add(group);
      for (const above of namedBy.get(`@${group}`) ?? []) pending.push(above);
    }
    holding.set(node, [...found].sort());
  }
  return holding;
}

function hasGroup(groups: Groups, name: string): boolean {
  return name === ALL || Object.hasOwn(groups, name);
}

/**
 * A target read on the inventory, once: its terms (none when it is not a target) and the
 * nodes they name, or why they name none. What is asked of it after (the grants) reads
 * this, never the target again.
 */
export interface ReadTarget {
  target: string;
  terms?: Term[];
  targeted: Targeted;
}

/** Reads a target on the inventory: parsed, then resolved to its nodes. */
export function readTarget(target: string, inventory: Inventory): ReadTarget {
  const terms = parseTarget(target);
  if (!Array.isArray(terms)) return { target, targeted: { ok: false, refusal: terms } };
  return { target, terms, targeted: nodesOfTerms(target, terms, inventory) };
}

/** Turns a target into the nodes it names, on the inventory. */
export function resolveTarget(target: string, inventory: Inventory): Targeted {
  return readTarget(target, inventory).targeted;
}

/** The nodes of a target's terms: those its parts add, less those they remove. */
function nodesOfTerms(target: string, terms: readonly Term[], inventory: Inventory): Targeted {
  const known = new Set(inventory.nodes);
  const added = new Set<string>();
  const removed = new Set<string>();
  for (const term of terms) {
    let nodes: ReadonlySet<string> | undefined;
    for (const atom of term.all) {
      const found = nodesOf(atom, known, inventory.groups);
      if ('ok' in found) return found;
      nodes = nodes === undefined ? found : new Set([...nodes].filter((node) => found.has(node)));
    }
    for (const node of nodes ?? []) (term.remove ? removed : added).add(node);
  }
  const nodes = [...added].filter((node) => !removed.has(node)).sort();
  if (nodes.length === 0)
    return { ok: false, refusal: { kind: 'target-empty', code: 'invalid_target', target } };
  return { ok: true, nodes };
}

/** What was meant, when a name is close to one: nothing at all when none is. */
function hint(meant: string | undefined): { meant?: string } {
  return meant === undefined ? {} : { meant };
}

/** The nodes of a node or group of a target, or why the inventory has none of that name. */
function nodesOf(
  atom: Atom,
  known: ReadonlySet<string>,
  groups: Groups,
): ReadonlySet<string> | Extract<Targeted, { ok: false }> {
  if (atom.kind === 'group' && hasGroup(groups, atom.name))
    return atom.name === ALL ? known : membersOf(atom.name, groups);
  if (atom.kind === 'node' && known.has(atom.name)) return new Set([atom.name]);
  return unknown(atom, known, groups);
}

/** A name the inventory does not have, refused with the name it likely meant. */
function unknown(
  atom: Atom,
  known: ReadonlySet<string>,
  groups: Groups,
): Extract<Targeted, { ok: false }> {
  if (atom.kind === 'node') {
    const meant = closest(atom.name, known);
    return {
      ok: false,
      refusal: { kind: 'unknown-node', code: 'unknown_node', node: atom.name, ...hint(meant) },
    };
  }
  const meant = closest(`@${atom.name}`, [
    ...Object.keys(groups).map((group) => `@${group}`),
    `@${ALL}`,
  ]);
  return {
    ok: false,
    refusal: { kind: 'unknown-group', code: 'unknown_group', group: atom.name, ...hint(meant) },
  };
}

/**
 * Whether a target takes in one node of the inventory: what a grant asks, with no need of
 * the rest of the inventory (an act on one node of a large one reads that node alone).
 * A name the target does not know takes in nothing.
 */
export function targetCovers(target: string, node: string, groups: Groups): boolean {
  const terms = parseTarget(target);
  if (!Array.isArray(terms)) return false;
  const takesIn = (term: Term) =>
    term.all.every((atom) =>
      atom.kind === 'node'
        ? atom.name === node
        : atom.name === ALL ||
          (Object.hasOwn(groups, atom.name) && membersOf(atom.name, groups).has(node)),
    );
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
  // A cycle: depth first, a group met again while it is still being walked. The walk
  // keeps its own stack (each group with the next of its members to look at), not the
  // call stack: a chain of groups as long as the inventory is walked like a short one.
  const walking = new Set<string>();
  const walked = new Set<string>();
  for (const start of Object.keys(groups)) {
    if (walked.has(start)) continue;
    const path: { group: string; next: number }[] = [{ group: start, next: 0 }];
    walking.add(start);
    while (path.length > 0) {
      const top = path[path.length - 1] as { group: string; next: number };
      const members = ownValue(groups, top.group) ?? [];
      const member = members[top.next++];
      if (member === undefined) {
        path.pop();
        walking.delete(top.group);
        walked.add(top.group);
        continue;
      }
      if (!member.startsWith('@')) continue;
      const group = member.slice(1);
      if (walking.has(group)) {
        const names = path.map((step) => step.group);
        const cycle = [...names.slice(names.indexOf(group)), group].map((name) => `@${name}`);
        return `groups.${group} takes itself in: ${shortened(cycle).join(' → ')}`;
      }
      if (walked.has(group)) continue;
      walking.add(group);
      path.push({ group, next: 0 });
    }
  }
  return undefined;
}

/** A long cycle said by its ends: its first and last groups, and how many between. */
function shortened(cycle: string[]): string[] {
  if (cycle.length <= 12) return cycle;
  return [
    ...cycle.slice(0, 5),
    `… ${(cycle.length - 10).toLocaleString('en-US')} more …`,
    ...cycle.slice(-5),
  ];
}
