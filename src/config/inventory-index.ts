import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';
import { isName } from '../model/names.ts';
import { type Settings, SettingsSchema } from '../model/settings.ts';

/**
 * An index of a large berth.json, so that an act on one node reads that node's entry and
 * not the whole inventory: JSON.parse alone of 100,000 nodes costs more than the rest of
 * an act. It is a cache and nothing else: kept in `cache/inventory/<stamp>/` of the state
 * directory, made from a berth.json that was read whole and found valid, used only while
 * berth.json has the same stamp (device, inode, size, times of modification and change),
 * and removed when anything in it is amiss.
 *
 * - `head.json`: the stamp, the number of buckets, and the settings but the nodes.
 * - `b<k>.json`: the nodes whose name hashes to bucket k, about PER_BUCKET of them.
 */

/** berth.json is indexed from this size on (some 7,000 nodes); below, reading it is cheap. */
export const INDEXED_FROM = 256 * 1024;

/**
 * A berth.json changed less than this long ago is not indexed yet: a file system's clock
 * ticks in milliseconds, so a second edit of the same size within the tick could keep
 * the stamp. Any later edit moves the time of change past it.
 */
export const SETTLED_MS = 2_000;

const PER_BUCKET = 256;
const HEAD = 'head.json';

const HeadSchema = v.object({
  stamp: v.string(),
  buckets: v.pipe(v.number(), v.integer(), v.minValue(1)),
  settings: v.unknown(),
});

/** FNV-1a over the name's UTF-16 code units: the same bucket in every berth. */
function bucketOf(name: string, buckets: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    hash ^= name.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % buckets;
}

/**
 * The settings with the inventory's entries of `nodes` alone (a node not in it is absent),
 * from the index of berth.json as stamped; undefined when there is no such index, or it
 * cannot be used.
 */
export async function readIndexed(
  cacheDir: string,
  stamp: string,
  nodes: readonly string[],
): Promise<Settings | undefined> {
  const here = join(cacheDir, stamp);
  let headText: string;
  try {
    headText = await readFile(join(here, HEAD), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const head = v.parse(HeadSchema, JSON.parse(headText));
    if (head.stamp !== stamp) throw new Error('an index of another berth.json');
    const entries: Record<string, unknown> = {};
    const read = new Map<number, Record<string, unknown>>();
    for (const node of nodes) {
      if (!isName(node)) continue;
      const k = bucketOf(node, head.buckets);
      let bucket = read.get(k);
      if (!bucket) {
        bucket = JSON.parse(await readFile(join(here, `b${k}.json`), 'utf8')) as Record<
          string,
          unknown
        >;
        read.set(k, bucket);
      }
      if (Object.hasOwn(bucket, node)) entries[node] = bucket[node];
    }
    // The entries found are checked again as berth.json's own: the index is never trusted
    // further than the schema.
    const settings = v.safeParse(SettingsSchema, {
      ...(head.settings as object),
      nodes: entries,
    });
    if (settings.success) return settings.output;
  } catch {
    // Damaged: a bucket cut short or gone, a head that is not one.
  }
  // A damaged index is removed, so that the next whole read makes it anew.
  await rm(here, { recursive: true, force: true }).catch(() => {});
  return undefined;
}

/**
 * Indexes settings read whole from berth.json as stamped, and removes the indexes of
 * earlier berth.json's. Made aside and renamed into place, so a reader sees a whole index
 * or none. Never fails: an index that cannot be made (a state directory that is read-only,
 * another berth that made it first) is done without, and the next act reads berth.json
 * whole again.
 */
export async function writeIndex(cacheDir: string, stamp: string, settings: Settings) {
  try {
    await makeIndex(cacheDir, stamp, settings);
  } catch {
    // No index this time.
  }
}

async function makeIndex(cacheDir: string, stamp: string, settings: Settings) {
  const { nodes, ...rest } = settings;
  const names = Object.keys(nodes);
  const buckets = Math.max(1, Math.ceil(names.length / PER_BUCKET));
  const grouped = Array.from({ length: buckets }, () => ({}) as Record<string, unknown>);
  for (const name of names)
    (grouped[bucketOf(name, buckets)] as Record<string, unknown>)[name] = nodes[name];
  await mkdir(cacheDir, { recursive: true, mode: 0o700 });
  const staging = await mkdtemp(join(cacheDir, '.staging-'));
  try {
    for (let k = 0; k < buckets; k += 64) {
      await Promise.all(
        grouped
          .slice(k, k + 64)
          .map((bucket, i) => writeFile(join(staging, `b${k + i}.json`), JSON.stringify(bucket))),
      );
    }
    await writeFile(join(staging, HEAD), JSON.stringify({ stamp, buckets, settings: rest }));
    await rename(staging, join(cacheDir, stamp));
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  for (const name of await readdir(cacheDir)) {
    if (name !== stamp) await rm(join(cacheDir, name), { recursive: true, force: true });
  }
}
