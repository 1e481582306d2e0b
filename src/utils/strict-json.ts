import * as v from 'valibot';
import { ownRecord } from './own-record.ts';

/**
 * Schemas for the JSON an operator writes by hand (berth.json, module definitions).
 * Every object is strict: a field berth does not know is refused, never dropped. And a
 * list is not an object: valibot's object and record schemas take one (its indices as
 * keys), so `"files": []` would be no files and a definition `[]` an empty module. A
 * record keeps every key it is given (`ownRecord`): a node named `constructor` is one.
 */
export function strictJsonObject<const Entries extends v.ObjectEntries>(entries: Entries) {
  return notAList(v.strictObject(entries));
}

export function jsonRecord<
  const Key extends v.GenericSchema<string, string | number | symbol>,
  const Value extends v.GenericSchema,
>(key: Key, value: Value) {
  return notAList(ownRecord(key, value));
}

function notAList<S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.unknown(),
    v.check((value) => !Array.isArray(value), 'expected an object, got a list'),
    schema,
  );
}
