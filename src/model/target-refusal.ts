import * as v from 'valibot';
import { code, of } from './refusal-kind.ts';

/** A node's, module's or group's name that breaks the naming rule. */
export const NAME_REFUSALS = [
  of('name', code('invalid_name'), { of: v.picklist(['node', 'module']), given: v.string() }),
  of('group-name', code('invalid_name'), { given: v.string() }),
] as const;

/** Why a target names no node: its shape, or a name the inventory does not have. */
export const TARGET_REFUSALS = [
  of('target-shape', code('invalid_target'), {
    target: v.string(),
    shape: v.picklist(['empty', 'part', 'only-removes']),
  }),
  of('target-empty', code('invalid_target'), { target: v.string() }),
  of('unknown-node', code('unknown_node'), { node: v.string(), meant: v.optional(v.string()) }),
  of('unknown-group', code('unknown_group'), { group: v.string(), meant: v.optional(v.string()) }),
] as const;

const TargetRefusalSchema = v.variant('kind', [...NAME_REFUSALS, ...TARGET_REFUSALS]);
export type TargetRefusal = v.InferOutput<typeof TargetRefusalSchema>;
