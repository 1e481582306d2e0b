import { setMaxListeners } from 'node:events';
import type { Code } from '../codes.ts';
import type { Config } from '../config/config.ts';
import { digestOf } from '../digest.ts';
import { grantedTarget } from '../grants.ts';
import { ownValue } from '../own-record.ts';
import { type Basis, describeChanges, notADigest } from '../preview.ts';
import type { CommandRequest, Outcome } from '../request.ts';
import type { NodeReport } from '../result.ts';
import { saidOf, untoldOf } from '../said.ts';
import { resolveTarget } from '../targets.ts';
import {
  type ActDeps,
  answerOf,
  codeOf,
  type Face,
  type NodeAct,
  type OpenedAct,
  openNodeAct,
  type RunOutcome,
  refusedUnplaced,
} from './act.ts';
import { SharedDiffs } from './fleet-diffs.ts';
import { DEFAULT_PARALLEL } from './fleet-watch.ts';
import {
  actRecapLine,
  adoptRecapLine,
  type NodeEnd,
  prefixed,
  previewRecapLine,
  targetWords,
} from './fleet-words.ts';
import { inParallel } from './in-parallel.ts';
import type { CommandShape as Command } from './table.ts';

/** Nodes surveyed at once for a target's preview: surveys wait on machines, not on berth. */
const SURVEYS_AT_ONCE = 32;

const DIGEST = /^[0-9a-f]{64}$/;

/** Why the gate refused a target's act, for every node of it. */
type GateRefusal = { error: string; code: 'digest_stale' | 'digest_needed' | 'invalid_digest' };

/**
 * A command on a target of several nodes (a group, a list): one function for both faces.
 * assign, unassign, forget and adopt do the same on each node. A preview of take or
 * converge is every node's own preview, a recap and one digest over them all; the act
 * takes every node's lock in name order, plans each again, and acts only if none changed.
 */
export async function openFleetAct(
  command: Command,
  request: CommandRequest,
  config: Config,
  deps: ActDeps,
  face: Face,
): Promise<OpenedAct> {
  const refused = (refusal: { error: string; code: Code }, previewToo = false): OpenedAct =>
    refusedUnplaced(command, request, deps, face, refusal, previewToo);
  const { settings } = config;
  // Over the API the target is read as the subject's grants give it the inventory: the
  // whole target or nothing, and nothing said of nodes or groups it is not granted.
  const targeted =
    face.via === 'api'
      ? grantedTarget(settings, face.actor, command.name, request.node)
      : resolveTarget(request.node, {
          nodes: Object.keys(settings.nodes),
          groups: settings.groups,
        });
  if (!targeted.ok)
    return refused({ error: targeted.refused, code: targeted.code }, 'byGrants' in targeted);
  const { nodes } = targeted;
  const fleet = new Fleet(command, request, nodes, config, deps, face);
  if (!command.options.includes('yes')) return { kind: 'ready', run: () => fleet.eachNode() };
  return { kind: 'ready', run: () => (request.yes ? fleet.act() : fleet.preview()) };
}

/** A node's act opened under its lock, with the count of steps its progress is told against. */
interface Opened {
  act: NodeAct;
  steps: { of: number };
  closed: boolean;
}

class Fleet {
  /** At most `parallel` nodes at once; a rolling act `batch` at a time (the request's, both faces). */
  private readonly options: { parallel: number; batch?: number };

  constructor(
    private readonly command: Command,
    private readonly request: CommandRequest,
    private readonly nodes: readonly string[],
    private readonly config: Config,
    private readonly deps: ActDeps,
    private readonly face: Face,
  ) {
    this.options = { parallel: request.parallel ?? DEFAULT_PARALLEL, batch: request.batch };
    // Every node acting at once listens for the one stop (Ctrl-C, the API's close deadline).
    if (face.signal) setMaxListeners(0, face.signal);
  }

  /** assign, unassign, forget, adopt: the same on each node, each under its own lock. */
  async eachNode(): Promise<RunOutcome> {
    const outcomes = await inParallel(this.nodes, this.options.parallel, async (node) => {
      const started = performance.now();
      const opened = await this.open(node);
      if ('outcome' in opened) return { node, outcome: opened.outcome, ms: 0 };
      try {
        const outcome = await opened.act.run(this.requestFor(node));
        const ms = performance.now() - started;
        this.face.watch?.({
          node,
          kind: 'stage',
          stage: outcome.error === undefined ? 'done' : 'refused',
          words: outcome.error,
        });
        return { node, outcome, ms };
      } finally {
        await this.close(opened);
      }
    });
    const said = outcomes.flatMap(({ node, outcome }) => prefixed(node, saidOf(outcome)));
    // An adopt of many nodes ends with what each holds, a line a node, to read at a glance.
    if (this.command.name === 'adopt') {
      const adopted = outcomes.filter(({ outcome }) => outcome.error === undefined).length;
      said.push(
        `recap of ${targetWords(this.command.name, this.request)}:`,
        ...outcomes.map(({ node, outcome }) => adoptRecapLine(node, outcome)),
        `${adopted} of ${this.nodes.length} nodes adopted`,
      );
    }
    return this.answer(outcomes, { said, storeFailedToo: true });
  }

  /** Every node's own preview, surveyed in parallel under its lock, a recap, one digest. */
  async preview(): Promise<RunOutcome> {
    const opened = await this.openAll();
    if ('outcome' in opened) return opened.outcome;
    try {
      const plans = await this.planAll(opened.acts);
      const stores = storeFailure(plans);
      if (stores) return stores;
      const digest = await this.digestOf(plans);
      // Each node keeps its part of the target's preview, by the target's digest: the act
      // names only that digest, and says what changed on each node from it.
      for (const [node, { act }] of opened.acts) {
        const own = plans.get(node)?.report?.digest;
        const kept = own === undefined ? undefined : await act.context.store.findPreview(own);
        if (kept)
          await act.context.store.keepPreview({
            ...kept,
            digest,
            basis: { ...(kept.basis as Basis), nodeDigest: own },
          });
      }
      // A diff the same on several nodes is shown once, after the nodes, naming them.
      const shared = new SharedDiffs(plans);
      const blocks = this.nodes.map((node) => {
        const outcome = plans.get(node) as RunOutcome;
        const said = saidOf(outcome, shared.shownOnceFor(node));
        const lines = said === '' ? [] : [said];
        if (outcome.error !== undefined) lines.push(`${node}: ${outcome.error}`);
        return lines.join('\n');
      });
      const once = shared.words(this.face.fullDiff ?? false);
      const recap = this.nodes.map((node) =>
        previewRecapLine(node, this.command.name, plans.get(node) as Outcome),
      );
      const said = [
        ...blocks,
        ...(once === '' ? [] : [once]),
        [`recap of ${targetWords(this.command.name, this.request)}:`, ...recap].join('\n'),
        `digest ${digest}`,
      ].join('\n\n');
      const outcomes = this.nodes.map((node) => ({
        node,
        outcome: plans.get(node) as RunOutcome,
        ms: undefined,
      }));
      return this.answer(outcomes, { said: [said], digest });
    } finally {
      for (const item of opened.acts.values()) await this.close(item);
    }
  }

  /**
   * The act: every lock, in name order; every node planned again; nothing done anywhere if
   * the target's digest is not the one given; then each node acted on, at most `parallel`
   * at once, a batch at a time when asked, each lock let go when its node is done.
   */
  async act(): Promise<RunOutcome> {
    const opened = await this.openAll();
    if ('outcome' in opened) return opened.outcome;
    const { acts } = opened;
    try {
      const plans = await this.planAll(acts);
      const stores = storeFailure(plans);
      if (stores) return stores;
      const digest = await this.digestOf(plans);
      const given = this.request.digest;
      const gateRefusal =
        given === undefined
          ? this.yesAloneRefusal(plans)
          : given === digest
            ? undefined
            : await this.whatChanged(given, plans, acts);
      if (gateRefusal !== undefined) {
        const outcomes = this.nodes.map((node) => ({
          node,
          outcome: { ...(plans.get(node) as RunOutcome), ...gateRefusal },
          ms: undefined,
        }));
        return { ...this.answer(outcomes, { said: [] }), ...gateRefusal };
      }
      const ends = await this.actInBatches(plans, acts);
      const said = this.nodes.flatMap((node) =>
        prefixed(node, saidOf(ends.get(node)?.outcome ?? {})),
      );
      const recap = this.nodes.map((node) => actRecapLine(node, ends.get(node) as NodeEnd));
      const done = [...ends.values()].filter((end) => end.how === 'done').length;
      const last = `${done} of ${this.nodes.length} nodes done`;
      const words = [
        ...said,
        `recap of ${targetWords(this.command.name, this.request)}:`,
        ...recap,
        last,
      ];
      const outcomes = this.nodes.map((node) => ends.get(node) as NodeEnd);
      const answer = this.answer(outcomes, { said: words, notBegunToo: true });
      const untold = [
        ...this.nodes.flatMap((node) =>
          prefixed(node, untoldOf(ends.get(node)?.outcome ?? {}) ?? ''),
        ),
        `recap of ${targetWords(this.command.name, this.request)}:`,
        ...recap,
        last,
      ].join('\n');
      return { ...answer, untold };
    } finally {
      for (const item of acts.values()) await this.close(item);
    }
  }

  private async actInBatches(
    plans: ReadonlyMap<string, RunOutcome>,
    acts: ReadonlyMap<string, Opened>,
  ): Promise<Map<string, NodeEnd>> {
    const ends = new Map<string, NodeEnd>();
    const size = this.options.batch ?? this.nodes.length;
    let stopped = false;
    for (let from = 0; from < this.nodes.length; from += size) {
      const batch = this.nodes.slice(from, from + size);
      if (stopped) {
        for (const node of batch) {
          ends.set(node, { node, how: 'not-begun', outcome: { said: '' }, ms: undefined });
          this.face.watch?.({ node, kind: 'stage', stage: 'not-begun' });
          await this.close(acts.get(node) as Opened);
        }
        continue;
      }
      await inParallel(batch, this.options.parallel, async (node, index) => {
        const opened = acts.get(node) as Opened;
        // The first nodes begin as soon as the check is over: their survey is still the one
        // their act would ask for. A node that waited for its turn is surveyed again.
        if (from === 0 && index < this.options.parallel) opened.act.planOnLastSurvey();
        const end = await this.actOn(node, plans.get(node) as RunOutcome, opened);
        ends.set(node, end);
      });
      // A rolling act stops where a node failed: the next batch would likely fail alike.
      if (batch.some((node) => ['failed', 'refused'].includes(ends.get(node)?.how ?? '')))
        stopped = this.options.batch !== undefined;
    }
    return ends;
  }

  /** One node's act, on the plan it was given under its lock; its lock is let go after. */
  private async actOn(node: string, plan: RunOutcome, opened: Opened): Promise<NodeEnd> {
    const started = performance.now();
    try {
      if (plan.error !== undefined) {
        this.face.watch?.({ node, kind: 'stage', stage: 'refused', words: plan.error });
        return { node, how: 'refused', outcome: plan, ms: undefined };
      }
      opened.steps.of = plan.report?.steps.length ?? 0;
      this.face.watch?.({ node, kind: 'stage', stage: 'acting' });
      const outcome = await opened.act.run({
        ...this.requestFor(node),
        yes: true,
        digest: plan.report?.digest,
      });
      const ms = performance.now() - started;
      const blocked = (plan.report?.blockers.length ?? 0) > 0;
      const how: NodeEnd['how'] =
        outcome.error === undefined
          ? 'done'
          : outcome.report?.failed || outcome.storeFailed
            ? 'failed'
            : blocked
              ? 'blocked'
              : 'refused';
      this.face.watch?.({ node, kind: 'stage', stage: how, words: outcome.error });
      return { node, how, outcome, ms };
    } finally {
      await this.close(opened);
    }
  }

  /** With `yes` and no digest: enough only when no node has anything to do. */
  private yesAloneRefusal(plans: ReadonlyMap<string, RunOutcome>): GateRefusal | undefined {
    const nothing = [...plans.values()].every(
      (plan) =>
        plan.error === undefined &&
        plan.report?.steps.length === 0 &&
        plan.report?.blockers.length === 0,
    );
    if (nothing) return undefined;
    return {
      error: `a ${this.command.name} acts on a preview: preview it (berth ${targetWords(this.command.name, this.request)}), then act with yes and its digest`,
      code: 'digest_needed',
    };
  }

  /** The act's refusal when the target's digest is not the one given: what changed, node by node. */
  private async whatChanged(
    given: string,
    plans: ReadonlyMap<string, RunOutcome>,
    acts: ReadonlyMap<string, Opened>,
  ): Promise<GateRefusal> {
    if (!DIGEST.test(given)) return { error: notADigest(given), code: 'invalid_digest' };
    const changes: string[] = [];
    for (const node of this.nodes) {
      const store = (acts.get(node) as Opened).act.context.store;
      const kept = await store.findPreview(given);
      const own = plans.get(node)?.report?.digest;
      if (!kept) {
        changes.push(`${node} was not in that preview`);
        continue;
      }
      const before = kept.basis as Basis & { nodeDigest?: string };
      if (before.nodeDigest === own) continue;
      const now = own === undefined ? undefined : await store.findPreview(own);
      const said = now ? describeChanges(before, now.basis as Basis) : [];
      changes.push(
        said.length > 0 ? `${node}: ${said.join('; ')}` : `${node}: its preview changed`,
      );
    }
    if (changes.length === 0) changes.push(`the nodes of ${this.request.node} changed`);
    return {
      error: `the preview changed since digest ${given.slice(0, 12)}…: ${changes.join('; ')}; nothing was done on any node; preview again`,
      code: 'digest_stale',
    };
  }

  /** The target's digest: over the target, the command, and every node's own digest. */
  private digestOf(plans: ReadonlyMap<string, RunOutcome>): Promise<string> {
    const { command, request } = this;
    return digestOf({
      target: request.node,
      command: command.name,
      module: request.module,
      filter: request.filter ?? '',
      nodes: Object.fromEntries(
        this.nodes.map((node) => [node, plans.get(node)?.report?.digest ?? null]),
      ),
    });
  }

  /** Every node's preview, in parallel, under the locks already held. */
  private async planAll(acts: ReadonlyMap<string, Opened>): Promise<Map<string, RunOutcome>> {
    const plans = await inParallel(this.nodes, SURVEYS_AT_ONCE, async (node) => {
      this.face.watch?.({ node, kind: 'stage', stage: 'surveying' });
      const outcome = await (acts.get(node) as Opened).act.run({
        ...this.requestFor(node),
        yes: false,
        digest: undefined,
      });
      return [node, outcome] as const;
    });
    return new Map(plans);
  }

  /**
   * Every node's lock, one after another in name order: two targets that share nodes then
   * never hold one each of what the other waits for. Nothing is done if one cannot be had.
   */
  private async openAll(): Promise<{ acts: Map<string, Opened> } | { outcome: RunOutcome }> {
    const acts = new Map<string, Opened>();
    for (const node of this.nodes) this.face.watch?.({ node, kind: 'stage', stage: 'waiting' });
    for (const node of this.nodes) {
      const opened = await this.open(node);
      if ('outcome' in opened) {
        for (const item of acts.values()) await this.close(item);
        return opened;
      }
      acts.set(node, opened);
    }
    return { acts };
  }

  private async open(node: string): Promise<Opened | { outcome: RunOutcome }> {
    const steps = { of: 0 };
    let done = 0;
    const { watch } = this.face;
    const face: Face = {
      ...this.face,
      progress:
        watch && ((told) => watch({ node, kind: 'step', told, done: ++done, of: steps.of })),
      output: watch && ((line) => watch({ node, kind: 'output', line })),
    };
    const opened = await openNodeAct(
      this.command,
      this.requestFor(node),
      this.config,
      this.deps,
      face,
    );
    if (opened.kind === 'open') return { act: opened.act, steps, closed: false };
    if (opened.kind === 'stores')
      return {
        outcome: {
          said: '',
          error: `${node}: ${opened.refused}`,
          code: opened.code,
          storeFailed: true,
        },
      };
    return { outcome: await opened.run() };
  }

  private async close(opened: Opened): Promise<void> {
    if (opened.closed) return;
    opened.closed = true;
    await opened.act.close();
  }

  private requestFor(node: string): CommandRequest {
    return { ...this.request, node };
  }

  /**
   * The target's answer: `said` as given, `refused` naming each node refused or failed,
   * and each node's part of the typed result.
   */
  private answer(
    outcomes: readonly {
      node: string;
      outcome: RunOutcome;
      ms: number | undefined;
      how?: NodeEnd['how'];
    }[],
    options: { said: string[]; digest?: string; notBegunToo?: boolean; storeFailedToo?: boolean },
  ): RunOutcome {
    const nodes: Record<string, NodeReport> = {};
    const refusals: string[] = [];
    const codes = new Set<Code>();
    for (const { node, outcome, ms, how } of outcomes) {
      const part = ownValue(answerOf(this.command, this.requestFor(node), outcome).nodes, node) ?? {
        steps: [],
        blockers: [],
        outcome: outcome.error === undefined ? 'done' : 'refused',
        ...(outcome.error === undefined ? {} : { code: codeOf(outcome) }),
      };
      if (how === 'not-begun') {
        part.outcome = 'not-begun';
        if (options.notBegunToo) part.code = 'not_begun';
      }
      if (part.code !== undefined) codes.add(part.code);
      if (ms !== undefined) part.ms = Math.round(ms);
      nodes[node] = part;
      if (outcome.error !== undefined) refusals.push(`${node}: ${outcome.error}`);
      else if (how === 'not-begun' && options.notBegunToo)
        refusals.push(`${node}: not begun, as a batch before it had a node fail`);
    }
    return {
      said: options.said.join('\n'),
      // One code when every node refused for the same reason; else each node has its own.
      ...(refusals.length === 0
        ? {}
        : {
            error: refusals.join('\n'),
            code: codes.size === 1 ? ([...codes][0] as Code) : 'nodes_refused',
          }),
      fleet: { ...(options.digest === undefined ? {} : { digest: options.digest }), nodes },
    };
  }
}

/** A store that failed for a node while planning: the whole target is a store failure. */
function storeFailure(plans: ReadonlyMap<string, RunOutcome>): RunOutcome | undefined {
  for (const [node, plan] of plans)
    if (plan.storeFailed)
      return { said: '', error: `${node}: ${plan.error}`, code: plan.code, storeFailed: true };
  return undefined;
}
