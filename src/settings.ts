import * as v from 'valibot';
import { parseDuration } from './duration.ts';
import { checkName, isName } from './names.ts';

const NodeEntrySchema = v.union([
  v.strictObject({ root: v.pipe(v.string(), v.startsWith('/', 'a root is an absolute path')) }),
  v.strictObject({
    ssh: v.pipe(v.string(), v.minLength(1)),
    port: v.optional(
      v.pipe(
        v.number(),
        v.integer('port is a whole number'),
        v.minValue(1, 'port is from 1 to 65535'),
        v.maxValue(65_535, 'port is from 1 to 65535'),
      ),
    ),
    sudo: v.optional(v.boolean()),
  }),
]);
export type NodeEntry = v.InferOutput<typeof NodeEntrySchema>;

/** `berth.json`: the inventory, where the catalog is, and the flip window. */
export const SettingsSchema = v.strictObject({
  nodes: v.optional(
    v.pipe(
      v.record(v.string(), NodeEntrySchema),
      v.check(
        (nodes) => Object.keys(nodes).every(isName),
        'node names are 1 to 63 characters of a-z, 0-9 and -, starting with a letter or digit',
      ),
    ),
    { local: { root: '/' } },
  ),
  catalog: v.optional(v.pipe(v.string(), v.minLength(1)), 'modules'),
  flip: v.optional(
    v.pipe(
      v.string(),
      v.check(
        (text) => parseDuration(text) !== undefined,
        'flip is a duration like "90s", "15m" or "1h"',
      ),
    ),
    '15m',
  ),
});
export type Settings = v.InferOutput<typeof SettingsSchema>;

export function defaultSettings(): Settings {
  return v.parse(SettingsSchema, {});
}

export function flipMs(settings: Settings): number {
  return parseDuration(settings.flip) ?? 15 * 60_000;
}

/** The first refusal a node name meets: the name rule, then the inventory. */
export function checkNodeIn(settings: Settings, node: string): string | undefined {
  if (!isName(node)) return checkName('node', node);
  if (node in settings.nodes) return undefined;
  return `berth does not know node ${node}; add it under nodes in berth.json`;
}
