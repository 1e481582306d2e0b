import type { Declared } from '../commands/declared.ts';

/**
 * What a node is to run, each with where it comes from when berth.json declares any:
 * `nginx (berth.json run.@web), redis (assigned)`. `status` and `nodes` say it alike.
 */
export function toRunWords(assigned: readonly string[], declared: readonly Declared[]): string {
  const from = new Map<string, string[]>();
  for (const module of assigned) from.set(module, ['assigned']);
  for (const item of declared)
    from.set(item.module, [
      ...(from.get(item.module) ?? []),
      ...item.from.map((target) => `berth.json run.${target}`),
    ]);
  if (from.size === 0) return 'nothing';
  // Where each comes from is news only when berth.json declares some of them.
  if (declared.length === 0) return [...assigned].join(', ');
  return [...from.keys()]
    .sort()
    .map((module) => `${module} (${(from.get(module) ?? []).join('; ')})`)
    .join(', ');
}
