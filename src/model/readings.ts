import { ownValue } from '../utils/own-record.ts';
import type { ModuleDefinition } from './catalog.ts';
import { type Facts, type MachineFacts, nodeFacts } from './facts.ts';
import type { NodeEntry, Settings } from './settings.ts';
import { renderTemplate, type TemplateInputs } from './template.ts';
import type { Value } from './value-type.ts';
import {
  type Given,
  givenTo,
  moduleValues,
  type ValueProblem,
  valueGroupsOf,
  valueText,
} from './values.ts';

/**
 * What a node's modules read besides their secrets: each module's values (as berth.json
 * gives them to the node, else their defaults) and the node's facts. A plan gathers them
 * once; its files are rendered with them, its hooks see them, its digest covers them.
 */
export interface Readings {
  facts: Facts;
  /** By module: the values it declares, each as the node has it. */
  values: ReadonlyMap<string, Readonly<Record<string, Value>>>;
}

/** Each value berth.json gives a node, with where it came from (its own, a group's, `@all`'s). */
export function givenToNode(
  settings: Pick<Settings, 'values' | 'groups'>,
  node: string,
): Map<string, Given> {
  return givenTo(settings.values, node, valueGroupsOf(settings.values, node, settings.groups))
    .given;
}

/**
 * One module's values on a node, and what stands in the way of any: what `{{value NAME}}`
 * reads in its templates and `BERTH_VALUE_NAME` in its hooks.
 */
export function valuesOnNode(
  settings: Pick<Settings, 'values' | 'groups'>,
  node: string,
  module: string,
  definition: Pick<ModuleDefinition, 'values'>,
): { values: Record<string, Value>; problems: ValueProblem[] } {
  return moduleValues(module, definition.values, givenToNode(settings, node));
}

/** A node's facts, from its inventory entry and what its machine's survey told (`facts` asked). */
export function factsOf(
  settings: Pick<Settings, 'nodes'>,
  node: string,
  told: MachineFacts | undefined,
): Facts {
  const entry = ownValue(settings.nodes, node) as NodeEntry | undefined;
  return nodeFacts(node, entry ?? { root: '/' }, told ?? {});
}

/**
 * A template rendered for a module on a node: a file's text, or what a definition says in
 * place of a URL (`https://{{fact fqdn}}:{{value port}}/`). The values and facts as
 * `readings` has them; secrets only when given.
 */
export function renderFor(
  text: string,
  readings: Readings | undefined,
  module: string,
  secrets?: Readonly<Record<string, string>>,
): string {
  return renderTemplate(text, { ...inputsFor(readings, module), ...(secrets ? { secrets } : {}) });
}

/** What a module's templates read of the readings: its values, the node's facts. */
export function inputsFor(readings: Readings | undefined, module: string): TemplateInputs {
  if (!readings) return {};
  return { values: readings.values.get(module) ?? {}, facts: readings.facts };
}

/**
 * A hook's environment from berth: `BERTH_NODE`, `BERTH_MODULE`, and every value the module
 * declares and every fact, each name upper-cased (`BERTH_VALUE_SITE_NAME`,
 * `BERTH_FACT_FQDN`). They reach the hook as its environment, never in its text, so no
 * value is ever read as shell.
 */
export function hookEnv(node: string, module: string, readings?: Readings): Record<string, string> {
  const env: Record<string, string> = { BERTH_NODE: node, BERTH_MODULE: module };
  if (!readings) return env;
  for (const [name, value] of Object.entries(readings.facts))
    env[`BERTH_FACT_${name.toUpperCase()}`] = value;
  for (const [name, value] of Object.entries(readings.values.get(module) ?? {}))
    env[`BERTH_VALUE_${name.toUpperCase()}`] = valueText(value);
  return env;
}
