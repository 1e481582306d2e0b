import { type Basis, checkDigest, keepPreview, previewDigest, scopeWords } from '../../preview.ts';
import type { CommandRequest } from '../../request.ts';
import type { KeptPreview } from '../../stores/stores.ts';
import type { CommandContext } from '../context.ts';

/** Where the gate lets a request through: to a preview, a refusal, or the act. */
export type Gated =
  | { to: 'preview'; digest: string }
  | {
      to: 'refused';
      digest: string;
      error: string;
      code: 'digest_stale' | 'digest_needed' | 'invalid_digest';
    }
  | { to: 'act'; digest: string };

/**
 * The one gate of take and converge: the preview is sealed (digested and kept); without
 * `yes` that is all; with `yes`, the digest given must name this very preview, or, when
 * there is nothing to compare, `yes` alone is enough. What else refuses the act (blockers,
 * a stale account) is the command's own, after the gate.
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
  if (changed) return { to: 'refused', digest, ...changed };
  if (request.digest === undefined && !preview.yesAlone) {
    return {
      to: 'refused',
      digest,
      code: 'digest_needed',
      error: `a ${kind} acts on a preview: preview it (berth ${scopeWords(basis.node, basis.scope)}), then act with yes and its digest`,
    };
  }
  return { to: 'act', digest };
}
