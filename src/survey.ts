import type { ModuleDefinition } from './catalog.ts';
import { fingerprintWith } from './digest.ts';
import type { Machine } from './machines/machine.ts';
import type { Holdings } from './state.ts';

/**
 * What a machine holds for one module, read without changing anything: each data
 * path found or not, each secret found or not with its fingerprint, each file's
 * fingerprint and mode. Data is "found" when it exists and is not empty.
 */
export async function surveyModule(
  machine: Machine,
  definition: ModuleDefinition,
  key: Uint8Array,
): Promise<Holdings> {
  const holdings: Holdings = { data: [], secrets: {}, files: {} };
  for (const path of definition.data) {
    const facts = await machine.inspect(path);
    const found =
      facts.kind === 'other' ||
      (facts.kind === 'file' && facts.size > 0) ||
      (facts.kind === 'directory' && !facts.empty);
    holdings.data.push({ path, found });
  }
  for (const [name, spec] of Object.entries(definition.secrets)) {
    const facts = await machine.inspect(spec.path);
    const value =
      facts.kind === 'file' && facts.size > 0 ? await machine.read(spec.path) : undefined;
    holdings.secrets[name] = value?.length
      ? { path: spec.path, found: true, fingerprint: await fingerprintWith(key, value) }
      : { path: spec.path, found: false };
  }
  for (const path of Object.keys(definition.files)) {
    const facts = await machine.inspect(path);
    const content = facts.kind === 'file' ? await machine.read(path) : undefined;
    holdings.files[path] =
      facts.kind === 'file' && content
        ? { found: true, fingerprint: await fingerprintWith(key, content), mode: facts.mode }
        : { found: false };
  }
  return holdings;
}
