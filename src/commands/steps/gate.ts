import type { Asked } from '../../model/asked.ts';
import type { RefusalOf } from '../../model/refusal.ts';
import type { CommandRequest } from '../../model/request.ts';
import type { KeptPreview, NodeStore } from '../../stores/stores.ts';
import type { CommandContext } from '../context.ts';
import {
  type Basis,
  changesBetween,
  checkDigest,
  isDigest,
  keepPreview,
  previewDigest,
  scopeOf,
} from '../preview-basis.ts';

/** Why the gate refused an act. */
export type GateRefusal = RefusalOf<
  'digest-stale' | 'digest-stale-nodes' | 'digest-unkept' | 'digest-needed' | 'invalid-digest'
>;

/** Where the gate lets a request through: to a preview, a refusal, or the act. */
export type Gated =
  | { to: 'preview'; digest: string }
  | { to: 'refused'; digest: string; refusal: GateRefusal }
  | { to: 'act'; digest: string };

/**
 * The one gate of take and converge: the preview is sealed (digested and kept); without
 * `yes` that is all; with `yes`, the digest given must name this very preview, or, when
 * there is nothing to compare, `yes` alone is enough. What else refuses the act (blockers,
 * a stale account) is the command's own, after the gate. A target of several nodes is
 * gated twice: each node here, and the target as a whole (`sealTarget`, `gateTarget`).
 */
export async function gate(
  request: Pick<CommandRequest, 'yes' | 'digest'>,
  context: CommandContext,
  preview: { kind: KeptPreview['kind']; plan: unknown; basis: Basis; yesAlone: boolean },
): Promise<Gated> {
  const { kind, plan, basis } = preview;
  const digest = await previewDigest(kind, plan, basis);
  // The preview an act names is read before this one is kept, so an act refused because
  // that one cannot be read has written nothing.
  const changed =
    request.yes && request.digest !== undefined
      ? await checkDigest(context.store, request.digest, digest, basis)
      : undefined;
  await keepPreview(context.store, kind, digest, basis, context.now());
  if (!request.yes) return { to: 'preview', digest };
  if (changed) return { to: 'refused', digest, refusal: changed };
  if (request.digest === undefined && !preview.yesAlone)
    return { to: 'refused', digest, refusal: digestNeeded(scopeOf(basis)) };
  return { to: 'act', digest };
}

/** The refusal of `yes` without a digest where there is something to do. */
function digestNeeded(asked: Asked): GateRefusal {
  return { kind: 'digest-needed', code: 'digest_needed', asked };
}

/** One node of a target as the target's gate sees it: its records and its own digest. */
export interface GatedNode {
  node: string;
  store: NodeStore;
  /** The node's own preview digest; none when its preview was refused. */
  own?: string;
  /** Nothing to do and nothing in the way: `yes` alone would do for it. */
  nothing: boolean;
}

/**
 * Seals a target's preview: each node keeps its part of it by the target's digest, with
 * its own digest beside, so that an act naming the target's digest says what changed on
 * each node. Each node's store is its own: they are written at once, and all are done
 * (each under its node's lock) before a failure is told.
 */
export async function sealTarget(digest: string, nodes: readonly GatedNode[]): Promise<void> {
  const sealed = await Promise.allSettled(
    nodes.map(async ({ store, own }) => {
      const kept = own === undefined ? undefined : await store.findPreview(own);
      if (kept)
        await store.keepPreview({
          ...kept,
          digest,
          basis: { ...(kept.basis as Basis), nodeDigest: own },
        });
    }),
  );
  const failed = sealed.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
}

/**
 * The gate of a target of several nodes, every node planned again under its lock: the
 * digest given must be the target's of now, or `yes` alone when no node has anything to
 * do; else nothing is done on any node, and what changed is said node by node.
 */
export async function gateTarget(
  request: { digest?: string; asked: Asked },
  digest: string,
  nodes: readonly GatedNode[],
): Promise<GateRefusal | undefined> {
  const given = request.digest;
  if (given === undefined)
    return nodes.every((node) => node.nothing) ? undefined : digestNeeded(request.asked);
  if (given === digest) return undefined;
  if (!isDigest(given)) return { kind: 'invalid-digest', code: 'invalid_digest', given };
  const target = request.asked.node;
  const keptBy = await Promise.all(nodes.map(({ store }) => store.findPreview(given)));
  // No node keeps it: said once, not node by node.
  if (keptBy.every((preview) => preview === undefined))
    return { kind: 'digest-unkept', code: 'digest_stale', given, target };
  const changed: RefusalOf<'digest-stale-nodes'>['nodes'] = [];
  for (const [index, { node, store, own }] of nodes.entries()) {
    const kept = keptBy[index];
    if (!kept) {
      changed.push({ node });
      continue;
    }
    const before = kept.basis as Basis & { nodeDigest?: string };
    if (before.nodeDigest === own) continue;
    const now = own === undefined ? undefined : await store.findPreview(own);
    changed.push({ node, changes: now ? changesBetween(before, now.basis as Basis) : [] });
  }
  return { kind: 'digest-stale-nodes', code: 'digest_stale', given, target, nodes: changed };
}
