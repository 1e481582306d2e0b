import type { ActDeps } from '../commands/act-shapes.ts';
import { declaredFor } from '../commands/declared.ts';
import { type Config, ConfigError } from '../config/config.ts';
import { unusableIssuer } from '../http/issuer-authenticator.ts';
import type { FactName, Facts, MachineFacts } from '../model/facts.ts';
import { checkName } from '../model/names.ts';
import { factsOf, valuesOnNode } from '../model/readings.ts';
import type { Settings } from '../model/settings.ts';
import { readsOf, renderTemplate } from '../model/template.ts';
import type { ValueProblem } from '../model/values.ts';
import { StoreError, storesCannotOpen } from '../stores/stores.ts';
import { describeDuration } from '../utils/duration.ts';
import { ownValue } from '../utils/own-record.ts';

/** How long berth api waits for a node's facts at its start before it reads the kept survey's. */
export const FACTS_WAIT_MS = 10_000;

/** Where the facts an issuer's URL read came from. */
export type IssuerFacts =
  /** It read none the machine tells (or none at all). */
  | { from: 'inventory' }
  /** A survey of the node now. */
  | { from: 'survey' }
  /** The newest survey berth keeps of the node, which cannot be reached now (`why`). */
  | { from: 'kept'; at: string; why: string };

/** The issuer a module provides on a node, and where the facts it read came from. */
export interface ModuleIssuer {
  module: string;
  node: string;
  url: string;
  facts: IssuerFacts;
}

/** Why `--issuer MODULE@NODE` names no issuer berth api can use, as a value. */
export type ModuleIssuerRefusal =
  /** Not one module and one node around one `@`. */
  | { kind: 'form' }
  /** A name that is none, berth.json that cannot be read, stores that cannot be opened: `why` in words. */
  | { kind: 'unreadable'; why: string }
  | { kind: 'no-node'; node: string; known: string[] }
  /** `known`: the catalog's names, when the module is missing from it (else empty). */
  | { kind: 'no-module'; module: string; problem: string; known: string[] }
  | { kind: 'provides-none'; module: string }
  | { kind: 'not-to-run'; module: string; node: string }
  | { kind: 'value'; problem: ValueProblem; node: string }
  /** The node cannot be reached (`why`) and berth keeps no survey of it with its facts. */
  | { kind: 'unreachable'; node: string; why: string }
  | { kind: 'facts-untold'; module: string; node: string; facts: string[] }
  | { kind: 'unusable'; module: string; url: string; why: string };

export type ModuleIssuerAnswer = ModuleIssuer | { refused: ModuleIssuerRefusal };

/**
 * Whether `--issuer` names a module on a node rather than a URL: it has an `@` and is no
 * URL (which has `://`). A form that is not quite one is refused as such, in words,
 * rather than as a URL it never meant to be.
 */
export function namesModule(issuer: string): boolean {
  return issuer.includes('@') && !issuer.includes('://');
}

/**
 * The issuer `--issuer MODULE@NODE` names: the module's `provides.issuer`, a module the
 * node is to run, rendered with the values berth.json gives the node and its facts. The
 * facts come from a survey of the node now (one round trip, at most `FACTS_WAIT_MS`), else
 * from the newest survey berth keeps of it (a converge preview's); else it is refused.
 */
export async function moduleIssuer(issuer: string, deps: ActDeps): Promise<ModuleIssuerAnswer> {
  const parts = issuer.split('@');
  if (parts.length !== 2) return { refused: { kind: 'form' } };
  const [module = '', node = ''] = parts;
  const badName = checkName('module', module) ?? checkName('node', node);
  if (badName) return { refused: { kind: 'unreadable', why: badName } };
  let config: Config;
  try {
    config = await deps.loadConfig([]);
  } catch (error) {
    if (error instanceof ConfigError)
      return { refused: { kind: 'unreadable', why: error.message } };
    throw error;
  }
  const { settings, catalog } = config;
  if (!Object.hasOwn(settings.nodes, node))
    return { refused: { kind: 'no-node', node, known: Object.keys(settings.nodes) } };
  const entry = await catalog.entry(module);
  if ('problem' in entry) {
    const names = entry.missing ? await catalog.names() : [];
    return { refused: { kind: 'no-module', module, problem: entry.problem, known: names } };
  }
  const template = entry.definition.provides?.issuer;
  if (template === undefined) return { refused: { kind: 'provides-none', module } };
  const stored = await storesAnswer(() => deps.stores.readNode(node));
  if ('refused' in stored) return stored;
  const declared = declaredFor(settings, node).map((item) => item.module);
  if (!stored.read.assigned.includes(module) && !declared.includes(module))
    return { refused: { kind: 'not-to-run', module, node } };
  const values = valuesOnNode(settings, node, module, entry.definition);
  const [problem] = values.problems;
  if (problem) return { refused: { kind: 'value', problem, node } };

  const wanted = [...readsOf(template).fact];
  const inventory = factsOf(settings, node, {});
  let facts: Facts = inventory;
  let from: IssuerFacts = { from: 'inventory' };
  if (wanted.some((name) => ownValue(facts, name) === undefined)) {
    const surveyed = await surveyFacts(deps, settings, node);
    if ('told' in surveyed) {
      facts = factsOf(settings, node, surveyed.told);
      from = { from: 'survey' };
    } else {
      const kept = await storesAnswer(() => deps.stores.readSurveys([node]));
      if ('refused' in kept) return kept;
      const [survey] = kept.read;
      if (!survey?.facts) return { refused: { kind: 'unreachable', node, why: surveyed.why } };
      // berth.json's node and host as it says them now; the machine's as it told them then.
      facts = factsOf(settings, node, survey.facts as MachineFacts);
      from = { from: 'kept', at: survey.at, why: surveyed.why };
    }
  }
  const untold = wanted.filter((name) => ownValue(facts, name as FactName) === undefined);
  if (untold.length > 0) return { refused: { kind: 'facts-untold', module, node, facts: untold } };
  const url = renderTemplate(template, { values: values.values, facts });
  const unusable = unusableIssuer(url);
  if (unusable) return { refused: { kind: 'unusable', module, url, why: unusable } };
  return { module, node, url, facts: from };
}

/** What the stores read, or their failure as a refusal. */
async function storesAnswer<T>(
  read: () => Promise<T>,
): Promise<{ read: T } | { refused: ModuleIssuerRefusal }> {
  try {
    return { read: await read() };
  } catch (error) {
    if (error instanceof StoreError)
      return { refused: { kind: 'unreadable', why: storesCannotOpen(error) } };
    throw error;
  }
}

/** The node's facts from a survey now, or why they could not be had, in the machine's words. */
async function surveyFacts(
  deps: ActDeps,
  settings: Settings,
  node: string,
): Promise<{ told: MachineFacts } | { why: string }> {
  const machine = deps.machines(settings)(node);
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const waited = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within ${describeDuration(FACTS_WAIT_MS)}`)),
        FACTS_WAIT_MS,
      );
    });
    const survey = await Promise.race([
      machine.survey([], undefined, undefined, { facts: true }),
      waited,
    ]);
    return { told: survey.facts ?? {} };
  } catch (error) {
    return { why: (error as Error).message };
  } finally {
    clearTimeout(timer);
    await machine.close().catch(() => {});
  }
}
