import * as v from 'valibot';

/**
 * Records whose keys are names a user gave (nodes, groups, modules, secrets, paths), kept
 * as such whatever the name: `constructor`, `prototype` and `__proto__` are names like any
 * other. valibot's record drops those three keys without a word (they would reach an
 * object's prototype); this one keeps every own key of its input, each defined as the
 * object's own (so `__proto__` is a key, not the prototype). A plain object, as JSON makes
 * them: what looks a name up in it asks for an own key (`ownValue`, `Object.hasOwn`).
 * Its issues are valibot's record's, path and all.
 */
export function ownRecord<
  const Key extends v.GenericSchema<string, string | number | symbol>,
  const Value extends v.GenericSchema,
>(key: Key, value: Value): v.RecordSchema<Key, Value, undefined> {
  const record = v.record(key, value);
  return v._standardSchema<v.RecordSchema<Key, Value, undefined>>({
    ...record,
    '~run'(dataset, config) {
      const input = dataset.value;
      if (!input || typeof input !== 'object') return record['~run'](dataset, config);
      const output: Record<PropertyKey, unknown> = {};
      const issues: v.BaseIssue<unknown>[] = [];
      let typed = true;
      for (const entryKey of Object.keys(input)) {
        const entryValue = (input as Record<string, unknown>)[entryKey];
        const keyDataset = key['~run']({ value: entryKey }, config);
        const valueDataset = value['~run']({ value: entryValue }, config);
        for (const [origin, found] of [
          ['key', keyDataset],
          ['value', valueDataset],
        ] as const) {
          if (!found.issues) continue;
          const item: v.ObjectPathItem = {
            type: 'object',
            origin,
            input: input as Record<string, unknown>,
            key: entryKey,
            value: entryValue,
          };
          for (const issue of found.issues as v.BaseIssue<unknown>[]) {
            const at = issue as { path?: v.IssuePathItem[] };
            at.path = at.path ? [item, ...at.path] : [item];
            issues.push(issue);
          }
        }
        if (!keyDataset.typed || !valueDataset.typed) typed = false;
        if (keyDataset.typed)
          Object.defineProperty(output, keyDataset.value, {
            value: valueDataset.value,
            enumerable: true,
            writable: true,
            configurable: true,
          });
        if (issues.length > 0 && config.abortEarly) {
          typed = false;
          break;
        }
      }
      const done = dataset as unknown as {
        typed: boolean;
        value: unknown;
        issues?: v.BaseIssue<unknown>[];
      };
      done.typed = typed;
      done.value = output;
      if (issues.length > 0) done.issues = [...(done.issues ?? []), ...issues];
      return done as unknown as v.OutputDataset<
        v.InferOutput<v.RecordSchema<Key, Value, undefined>>,
        v.InferIssue<v.RecordSchema<Key, Value, undefined>>
      >;
    },
  });
}

/** The value a record holds under `key` as its own, never one `Object.prototype` holds. */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
