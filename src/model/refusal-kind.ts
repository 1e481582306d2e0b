import * as v from 'valibot';

/**
 * A refusal's kind as a valibot schema: its `kind`, its code (one of codes.ts) and the
 * facts its words need. Apart from refusal.ts so that a model file whose refusals are part
 * of the union (targets.ts) need not import the union back.
 */
export const of = <
  const K extends string,
  const C extends v.GenericSchema<string>,
  const E extends v.ObjectEntries,
>(
  kind: K,
  code: C,
  entries: E,
) => v.object({ kind: v.literal(kind), code, ...entries });

export const code = <const C extends string>(value: C) => v.literal(value);
