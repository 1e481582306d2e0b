import * as v from 'valibot';

/**
 * A value berth.json gives and a definition reads, and its types: apart from the rest of
 * values (values.ts), so that a value can be named by what carries one without them.
 */
export const VALUE_TYPES = ['string', 'integer', 'boolean'] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

/** A value: text, a whole number, or true or false. */
export type Value = string | number | boolean;

const VALUE_RULE = 'a value is a string, a whole number, true or false';

export const ValueSchema = v.union(
  [
    // An environment variable cannot hold a NUL, nor can a hook's word.
    v.pipe(
      v.string(),
      v.check((text) => !text.includes('\0'), 'a value holds no NUL character'),
    ),
    v.pipe(v.number(), v.integer(VALUE_RULE), v.safeInteger(VALUE_RULE)),
    v.boolean(),
  ],
  VALUE_RULE,
);
