import type { RefusalOf } from '../model/refusal.ts';
import type { NodeStore } from '../stores/stores.ts';
import { digestOf } from '../utils/digest.ts';

/**
 * What the stores keep of a plan file berth wrote (`--out`): beside the preview it holds,
 * kept by each node of its target, an entry kept by the digest of the file's whole content
 * (the typed answer with its `said`, the target, the command, when and with which state),
 * so that `berth act FILE` acts on a file only as berth wrote it, made with these stores,
 * and once. A hash the file held of itself would be made again by whoever edited it; these
 * entries are written only by a preview, under each node's lock.
 */

/** The digest of a plan's content: everything of its file but `format_version` and `kind`. */
export function planDigest(content: unknown): Promise<string> {
  return digestOf(content);
}

/** A plan file an act is made from, as the runner checks it against the stores. */
export interface PlanAsked {
  /** The digest of the file's content as it is now (`planDigest`). */
  digest: string;
  /** The file, as the words name it. */
  file: string;
  /** The state the file says it was made with, and the one this berth uses. */
  madeWith: string;
  using: string;
}

/** Keeps, on each node, the plan's entry beside the preview `previewDigest` it holds. */
export async function keepPlan(
  stores: readonly NodeStore[],
  previewDigest: string,
  plan: string,
): Promise<void> {
  for (const store of stores) {
    const kept = await store.findPreview(previewDigest);
    if (kept) await store.keepPreview({ ...kept, digest: plan, plan: { of: previewDigest } });
  }
}

/** Why a plan file may not be acted on. */
export type PlanRefusal = RefusalOf<
  'plan-acted-on' | 'plan-gone' | 'plan-edited' | 'plan-elsewhere'
>;

/**
 * Why the plan may not be acted on, or undefined: a file edited since berth wrote it (its
 * preview is kept here, its content is not); one made with another state or store (no
 * node keeps either: said once, with the state it names); one acted on already (when and
 * by whom); one whose preview a node no longer keeps.
 */
export async function planRefusal(
  target: string,
  nodes: readonly { node: string; store: NodeStore }[],
  asked: PlanAsked,
  previewDigest: string,
): Promise<PlanRefusal | undefined> {
  const found = await Promise.all(
    nodes.map(async ({ node, store }) => ({
      node,
      plan: await store.findPreview(asked.digest),
      preview: await store.findPreview(previewDigest),
    })),
  );
  const acted = found.find((item) => item.plan?.plan?.acted)?.plan?.plan?.acted;
  if (acted) return { kind: 'plan-acted-on', code: 'plan_acted_on', file: asked.file, ...acted };
  const keeping = found.filter((item) => item.plan?.plan?.of === previewDigest);
  if (keeping.length === found.length) return undefined;
  if (keeping.length > 0) {
    const gone = found.filter((item) => !keeping.includes(item)).map((item) => item.node);
    return { kind: 'plan-gone', code: 'digest_stale', file: asked.file, nodes: gone };
  }
  if (found.some((item) => item.preview))
    return { kind: 'plan-edited', code: 'plan_edited', file: asked.file };
  const { file, madeWith, using } = asked;
  return { kind: 'plan-elsewhere', code: 'plan_elsewhere', file, target, madeWith, using };
}

/** Marks the plan acted on, on a node whose act began: it is not acted on again. */
export async function spendPlan(
  store: NodeStore,
  plan: string,
  acted: { at: string; by: string },
): Promise<void> {
  const kept = await store.findPreview(plan);
  if (kept?.plan) await store.keepPreview({ ...kept, plan: { ...kept.plan, acted } });
}
