import * as v from 'valibot';

/**
 * Schemas for the JSON an operator writes by hand (berth.json, module definitions).
 * Every object is strict: a field berth does not know is refused, never dropped. And a
 * list is not an object: valibot's object and record schemas take one (its indices as
 * keys), so `"files": []` would be no files and a definition `[]` an empty module.
 */
export function strictJsonObject<const Entries extends v.ObjectEntries>(entries: Entries) {
  return notAList(v.strictObject(entries));
}

export function jsonRecord<
  const Key extends v.GenericSchema<string, string | number | symbol>,
  const Value extends v.GenericSchema,
>(key: Key, value: Value) {
  return notAList(v.record(key, value));
}

function notAList<S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.unknown(),
    v.check((value) => !Array.isArray(value), 'expected an object, got a list'),
    schema,
  );
}
