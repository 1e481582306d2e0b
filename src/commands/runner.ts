import type { Config } from '../config/config.ts';
import { type SurveyAgain, surveyAgain } from '../machines/survey-again.ts';
import type { NodeRefusal, Refusal } from '../model/refusal.ts';
import type { CommandRequest } from '../model/request.ts';
import { StoreError, storesRefusal } from '../stores/stores.ts';
import { digestOf } from '../utils/digest.ts';
import type { ActDeps, Face } from './act-shapes.ts';
import type { CommandShape as Command } from './command-shape.ts';
import { DEFAULT_PARALLEL, inParallel } from './in-parallel.ts';
import { keptSurvey } from './kept-survey.ts';
import { lockNode, type NodeAct, refusedUnplaced } from './node-act.ts';
import { nodeReport } from './node-report.ts';
import type { NodeEnd, RunOutcome, TargetRun } from './outcome.ts';
import { keepPlan, planDigest, planRefusal, spendPlan } from './plan-records.ts';
import type { ProgressEvent } from './progress-events.ts';
import { type GatedNode, gateTarget, sealTarget } from './steps/gate.ts';

/** Nodes surveyed at once for a target's preview: surveys wait on machines, not on berth. */
const SURVEYS_AT_ONCE = 32;

/** A node's act opened under its lock. */
interface Opened {
  act: NodeAct;
  closed: boolean;
}

/** What the stores failing in `work` ends the command with; undefined when they did not. */
async function storeFailure(work: () => Promise<void>): Promise<RunOutcome | undefined> {
  try {
    await work();
    return undefined;
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    return { refusal: storesRefusal(error), storeFailed: true };
  }
}

/** A node's preview under its lock, and how long it took. */
type Plans = ReadonlyMap<string, { outcome: RunOutcome; ms: number }>;

/**
 * The one runner from a resolved target to its acts, for both faces, for one node as for
 * many: lock, plan, gate, act, each node's part of the answer typed the same. assign,
 * unassign, forget, adopt, rekey and secret do the same on each node, each under its own
 * lock. A preview of take or converge is every node's own preview and one digest; the
 * act takes every node's lock in name order, and with several nodes plans each again and
 * acts only if none changed (one node's own gate checks it under the same lock as it acts).
 */
export class Runner {
  /** At most `parallel` nodes at once; a rolling act `batch` at a time (the request's, both faces). */
  private readonly options: { parallel: number; batch?: number };

  private readonly command: Command;
  private readonly request: CommandRequest;
  private readonly nodes: readonly string[];
  private readonly config: Config;
  private readonly deps: ActDeps;
  private readonly face: Face;
  /** Each node's machine, as the inventory reaches it: the way to it, made for this run. */
  private readonly machines: ReadonlyMap<string, SurveyAgain>;

  constructor(
    command: Command,
    request: CommandRequest,
    nodes: readonly string[],
    config: Config,
    deps: ActDeps,
    face: Face,
  ) {
    this.command = command;
    this.request = request;
    this.nodes = nodes;
    this.config = config;
    this.deps = deps;
    this.face = face;
    this.options = { parallel: request.parallel ?? DEFAULT_PARALLEL, batch: request.batch };
    // Made before any lock is taken: nothing between a lock and its act may throw.
    const reach = deps.machines(config.settings);
    const machines = new Map<string, SurveyAgain>();
    for (const node of nodes) machines.set(node, surveyAgain(reach(node)));
    this.machines = machines;
  }

  run(): Promise<RunOutcome> {
    this.tell({ kind: 'target', nodes: this.nodes });
    if (!this.command.options.includes('yes')) return this.eachNode();
    return this.request.yes ? this.act() : this.preview();
  }

  /** A target of one is answered as its node alone: its own outcome, no recap. */
  private get one(): boolean {
    return this.nodes.length === 1;
  }

  private tell(event: ProgressEvent): void {
    this.face.tell?.(event);
  }

  /** A command with no preview: the same on each node, each under its own lock. */
  private async eachNode(): Promise<RunOutcome> {
    const ends = await inParallel(this.nodes, this.options.parallel, async (node) => {
      const started = performance.now();
      const opened = await this.open(node);
      if ('outcome' in opened) return this.ended(node, 'refused', opened.outcome, started);
      try {
        const outcome = await opened.act.run(this.requestFor(node));
        const how = outcome.refusal === undefined ? 'done' : 'refused';
        return this.told(this.ended(node, how, outcome, started));
      } finally {
        await this.close(opened);
      }
    });
    return this.answer('each', ends);
  }

  /** Every node's own preview, surveyed in parallel under its lock, and one digest. */
  private async preview(): Promise<RunOutcome> {
    const opened = await this.lockAll();
    if ('outcome' in opened) return opened.outcome;
    try {
      const plans = await this.planAll(opened.acts);
      const stores = this.storeFailure(plans) ?? (await this.keepSurveys(plans, opened.acts));
      if (stores) return stores;
      // A target of one is its node's preview, by its node's own digest.
      const own = plans.get(this.nodes[0] as string)?.outcome.report?.digest;
      const digest = this.one ? own : await this.digestOf(plans);
      if (!this.one && digest !== undefined) {
        const sealing = this.gatedNodes(plans, opened.acts);
        const failed = await storeFailure(() => sealTarget(digest, sealing));
        if (failed) return failed;
      }
      const ends = this.nodes.map((node) => {
        const { outcome, ms } = plans.get(node) as { outcome: RunOutcome; ms: number };
        const how = outcome.refusal === undefined ? 'previewed' : 'refused';
        return { node, how, outcome, ms } as const;
      });
      const answered = this.answer('preview', ends, { digest });
      const { writingPlan } = this.face;
      // The plan file's whole content, kept by its digest beside its preview on each node.
      if (writingPlan && digest !== undefined) {
        const plan = await planDigest(writingPlan(answered));
        // Not kept, no file is written: its act would be refused as edited.
        const failed = await storeFailure(() => keepPlan(this.storesOf(opened.acts), digest, plan));
        if (failed) return failed;
      }
      return answered;
    } finally {
      for (const item of opened.acts.values()) await this.close(item);
    }
  }

  /**
   * The act: every lock, in name order; with several nodes, every node planned again and
   * nothing done anywhere if the target's digest is not the one given; then each node
   * acted on, at most `parallel` at once, a batch at a time when asked, each lock let go
   * when its node is done.
   */
  private async act(): Promise<RunOutcome> {
    const opened = await this.lockAll();
    if ('outcome' in opened) return opened.outcome;
    const { acts } = opened;
    try {
      const planned = await this.planFileRefusal(acts);
      if (planned) return planned;
      let plans: Plans | undefined;
      if (!this.one) {
        plans = await this.planAll(acts);
        const stores = this.storeFailure(plans);
        if (stores) return stores;
        const { node, module, filter } = this.request;
        const refusal = await gateTarget(
          {
            digest: this.request.digest,
            asked: {
              command: this.command.name,
              node,
              ...(module ? { module } : {}),
              ...(filter ? { filter } : {}),
            },
          },
          await this.digestOf(plans),
          this.gatedNodes(plans, acts),
        );
        if (refusal) {
          const ends = this.nodes.map((node) => {
            const { outcome, ms } = (plans as Plans).get(node) as {
              outcome: RunOutcome;
              ms: number;
            };
            return { node, how: 'refused', outcome: { ...outcome, refusal }, ms } as const;
          });
          // Refused as a whole, nothing begun on any node: journaled once, with the target.
          const journaled = await refusedUnplaced(
            this.command,
            this.request,
            this.deps,
            this.face,
            refusal,
          ).run();
          return {
            ...this.answer('act', ends, { refused: true }),
            refusal: journaled.refusal ?? refusal,
          };
        }
      }
      return this.answer('act', await this.actInBatches(plans, acts));
    } finally {
      for (const item of acts.values()) await this.close(item);
    }
  }

  /**
   * An act of a plan file: refused once, for the whole target and before any node is
   * planned again, when the file is not as berth wrote it with these stores, or was acted
   * on already; else the plan is shown, and the act goes on as any.
   */
  private async planFileRefusal(
    acts: ReadonlyMap<string, Opened>,
  ): Promise<RunOutcome | undefined> {
    const asked = this.face.actingOnPlan;
    if (!asked) return undefined;
    const nodes = this.nodes.map((node) => ({
      node,
      store: (acts.get(node) as Opened).act.context.store,
    }));
    let refusal: Awaited<ReturnType<typeof planRefusal>>;
    const failed = await storeFailure(async () => {
      refusal = await planRefusal(this.request.node, nodes, asked, this.request.digest ?? '');
    });
    if (failed) return failed;
    if (!refusal) {
      this.tell({ kind: 'plan-checked', file: asked.file });
      return undefined;
    }
    const ends = this.nodes.map(
      (node) => ({ node, how: 'refused', outcome: { refusal }, ms: 0 }) as const,
    );
    return { ...this.answer('act', ends, { refused: true }), refusal };
  }

  private async actInBatches(
    plans: Plans | undefined,
    acts: ReadonlyMap<string, Opened>,
  ): Promise<NodeEnd[]> {
    const ends = new Map<string, NodeEnd>();
    const size = this.options.batch ?? this.nodes.length;
    let stopped = false;
    for (let from = 0; from < this.nodes.length; from += size) {
      const batch = this.nodes.slice(from, from + size);
      if (stopped) {
        for (const node of batch) {
          ends.set(node, this.told({ node, how: 'not-begun', outcome: {}, ms: 0 }));
          await this.close(acts.get(node) as Opened);
        }
        continue;
      }
      await inParallel(batch, this.options.parallel, async (node, index) => {
        const opened = acts.get(node) as Opened;
        // The first nodes begin as soon as the check is over: their survey is still the one
        // their act would ask for. A node that waited for its turn is surveyed again.
        if (plans && from === 0 && index < this.options.parallel) opened.act.planOnLastSurvey();
        ends.set(node, await this.actOn(node, plans?.get(node)?.outcome, opened));
      });
      // A rolling act stops where a node failed: the next batch would likely fail alike.
      if (batch.some((node) => ['failed', 'refused'].includes(ends.get(node)?.how ?? '')))
        stopped = this.options.batch !== undefined;
    }
    return this.nodes.map((node) => ends.get(node) as NodeEnd);
  }

  /**
   * One node's act, on the plan it was given under its lock (a node alone: on the digest
   * the request gives, which its own gate checks); its lock is let go after.
   */
  private async actOn(
    node: string,
    plan: RunOutcome | undefined,
    opened: Opened,
  ): Promise<NodeEnd> {
    const started = performance.now();
    try {
      if (plan?.refusal !== undefined) return this.told(this.ended(node, 'refused', plan, started));
      this.tell({ kind: 'acting', node, steps: plan?.report?.steps.length });
      const outcome = await opened.act.run({
        ...this.requestFor(node),
        yes: true,
        digest: plan ? plan.report?.digest : this.request.digest,
      });
      const blocked = ((plan ?? outcome).report?.blockers.length ?? 0) > 0;
      const how: NodeEnd['how'] =
        outcome.refusal === undefined
          ? 'done'
          : outcome.report?.failed || outcome.storeFailed
            ? 'failed'
            : blocked
              ? 'blocked'
              : 'refused';
      // A plan file's act that began on this node is spent there, under its lock.
      const asked = this.face.actingOnPlan;
      if (asked && (how === 'done' || (how === 'failed' && !outcome.storeFailed))) {
        const at = (this.face.now?.() ?? new Date()).toISOString();
        // A mark the store cannot take leaves the plan to the digest's gate, as an act by
        // digest alone is: what was done is said either way.
        await storeFailure(() =>
          spendPlan(opened.act.context.store, asked.digest, { at, by: this.face.actor }),
        );
      }
      return this.told(this.ended(node, how, outcome, started));
    } finally {
      await this.close(opened);
    }
  }

  private ended(node: string, how: NodeEnd['how'], outcome: RunOutcome, started: number): NodeEnd {
    return { node, how, outcome, ms: performance.now() - started };
  }

  /** A node's end, told as it comes. */
  private told(end: NodeEnd): NodeEnd {
    this.tell({ kind: 'ended', end });
    return end;
  }

  /** The target's digest: over the target, the command, and every node's own digest. */
  private digestOf(plans: Plans): Promise<string> {
    const { command, request } = this;
    return digestOf({
      target: request.node,
      command: command.name,
      module: request.module,
      filter: request.filter ?? '',
      nodes: Object.fromEntries(
        this.nodes.map((node) => [node, plans.get(node)?.outcome.report?.digest ?? null]),
      ),
    });
  }

  /** Each node's records, under the locks held. */
  private storesOf(acts: ReadonlyMap<string, Opened>) {
    return this.nodes.map((node) => (acts.get(node) as Opened).act.context.store);
  }

  /** Each node as the target's gate sees it. */
  private gatedNodes(plans: Plans, acts: ReadonlyMap<string, Opened>): GatedNode[] {
    return this.nodes.map((node) => {
      const plan = plans.get(node)?.outcome;
      return {
        node,
        store: (acts.get(node) as Opened).act.context.store,
        own: plan?.report?.digest,
        nothing:
          plan?.refusal === undefined &&
          plan?.report?.steps.length === 0 &&
          plan?.report?.blockers.length === 0,
      };
    });
  }

  /** Every node's preview, in parallel, under the locks already held. */
  private async planAll(acts: ReadonlyMap<string, Opened>): Promise<Plans> {
    const plans = await inParallel(this.nodes, SURVEYS_AT_ONCE, async (node) => {
      this.tell({ kind: 'surveying', node });
      const started = performance.now();
      const outcome = await (acts.get(node) as Opened).act.run({
        ...this.requestFor(node),
        yes: false,
        digest: undefined,
      });
      return [node, { outcome, ms: performance.now() - started }] as const;
    });
    return new Map(plans);
  }

  /**
   * Each node's preview kept as its newest survey, when the command's preview of a whole
   * node is one (converge without a filter); a store that cannot keep it fails the target.
   */
  private async keepSurveys(
    plans: Plans,
    acts: ReadonlyMap<string, Opened>,
  ): Promise<RunOutcome | undefined> {
    if (!this.command.keepsSurvey || this.request.filter) return undefined;
    const at = (this.face.now ?? (() => new Date()))();
    const kept = await Promise.allSettled(
      this.nodes.map((node) => {
        const { outcome, ms } = plans.get(node) as { outcome: RunOutcome; ms: number };
        const how = outcome.refusal === undefined ? 'previewed' : 'refused';
        const end = { node, how, outcome, ms } as const;
        const survey = keptSurvey(this.command, this.requestFor(node), end, this.face, at);
        return (acts.get(node) as Opened).act.context.store.keepSurvey(survey);
      }),
    );
    const index = kept.findIndex((result) => result.status === 'rejected');
    if (index === -1) return undefined;
    const error = (kept[index] as PromiseRejectedResult).reason;
    return this.storesFailed(this.nodes[index] as string, { refusal: storesRefusal(error) });
  }

  /** A store that failed for a node while planning: the whole target is a store failure. */
  private storeFailure(plans: Plans): RunOutcome | undefined {
    for (const [node, { outcome }] of plans)
      if (outcome.storeFailed) return this.storesFailed(node, outcome);
    return undefined;
  }

  private storesFailed(node: string, outcome: RunOutcome): RunOutcome {
    const { refusal } = outcome;
    if (this.one || refusal?.kind !== 'stores') return { refusal, storeFailed: true };
    return {
      refusal: { kind: 'node-stores', code: refusal.code, node, refusal },
      storeFailed: true,
    };
  }

  /**
   * Every node's lock, one after another in name order: two targets that share nodes then
   * never hold one each of what the other waits for. Nothing is done if one cannot be had.
   */
  private async lockAll(): Promise<{ acts: Map<string, Opened> } | { outcome: RunOutcome }> {
    const acts = new Map<string, Opened>();
    for (const node of this.nodes) this.tell({ kind: 'waiting', node });
    for (const node of this.nodes) {
      const started = performance.now();
      const opened = await this.open(node);
      if ('outcome' in opened) {
        for (const item of acts.values()) await this.close(item);
        // The node not had is in the answer, with its code; no other node was begun.
        const end = this.ended(node, 'refused', opened.outcome, started);
        const nodes = { [node]: nodeReport(this.command, this.requestFor(node), end) };
        return { outcome: { ...this.storesFailed(node, opened.outcome), target: { nodes } } };
      }
      acts.set(node, opened);
    }
    return { acts };
  }

  private async open(node: string): Promise<Opened | { outcome: RunOutcome }> {
    const opened = await lockNode(
      this.command,
      node,
      this.request.node,
      this.machines.get(node) as SurveyAgain,
      this.config,
      this.deps,
      this.face,
    );
    if (opened.kind === 'open') return { act: opened.act, closed: false };
    return {
      outcome: { refusal: opened.refusal, storeFailed: true },
    };
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
   * The target's answer: each node's part of the typed result, the same for a node alone.
   * A node alone is its own outcome; several are how each ended (`several`), whose words
   * are made at the edge, and the refusal naming each node refused or failed.
   */
  private answer(
    kind: 'each' | 'preview' | 'act',
    ends: readonly NodeEnd[],
    options: { digest?: string; refused?: true } = {},
  ): RunOutcome {
    const nodes = Object.fromEntries(
      ends.map((end) => [end.node, nodeReport(this.command, this.requestFor(end.node), end)]),
    );
    const target = { ...(options.digest === undefined ? {} : { digest: options.digest }), nodes };
    if (this.one) return { ...(ends[0] as NodeEnd).outcome, target };
    const several: TargetRun = {
      kind,
      command: this.command.name,
      request: this.request,
      ends,
      ...(options.digest === undefined ? {} : { digest: options.digest }),
      ...(options.refused ? { refused: true } : {}),
    };
    return { refusal: targetRefusal(ends), target, several };
  }
}

/**
 * A target's refusal: each node refused or failed, by name, and those not begun; one
 * code when they share one, else `nodes_refused` (each node has its own).
 */
function targetRefusal(ends: readonly NodeEnd[]): Refusal | undefined {
  const nodes: NodeRefusal[] = [];
  const codes = new Set<Refusal['code']>();
  for (const { node, how, outcome } of ends) {
    if (outcome.refusal !== undefined) {
      // A node's own run refuses with a refusal of its own, never a target's.
      nodes.push({ node, refusal: outcome.refusal as NodeRefusal['refusal'] });
      codes.add(outcome.refusal.code);
    } else if (how === 'not-begun') {
      nodes.push({ node });
      codes.add('not_begun');
    }
  }
  if (nodes.length === 0) return undefined;
  const [code] = codes;
  return { kind: 'nodes', code: codes.size === 1 && code ? code : 'nodes_refused', nodes };
}
