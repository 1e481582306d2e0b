import type * as v from 'valibot';
import type {
  AttributesSchema,
  CertificateFileSchema,
  CheckOutcomeSchema,
  DriftSchema,
  KeyOfSchema,
  LaterOwnersSchema,
  RenewReasonSchema,
  StepSchema,
  WriteReasonSchema,
} from '../../model/steps.ts';

/**
 * The typed steps every plan is made of, take's and converge's alike: the planners make
 * them, the engine (engine.ts) carries them out, words.ts says them, report.ts lists them.
 */

/** The types of src/model/steps.ts's schemas, named for the code that makes and runs steps. */
export type Attributes = v.InferOutput<typeof AttributesSchema>;
export type LaterOwners = v.InferOutput<typeof LaterOwnersSchema>;
export type Drift = v.InferOutput<typeof DriftSchema>;
export type CheckOutcome = v.InferOutput<typeof CheckOutcomeSchema>;
export type CertificateFile = v.InferOutput<typeof CertificateFileSchema>;
export type KeyOf = v.InferOutput<typeof KeyOfSchema>;
export type RenewReason = v.InferOutput<typeof RenewReasonSchema>;
/** One thing an act does to a machine or to berth's own records. */
export type Step = v.InferOutput<typeof StepSchema>;
/** Why a file is written, as a value: the preview says it in words. */
export type WriteReason = v.InferOutput<typeof WriteReasonSchema>;

/** A check as a digest covers it: its exit status, not its words (see `checkCovered`). */
export type CoveredCheck = Pick<CheckOutcome, 'code'>;

export type StepKind = Step['do'];

/**
 * A step that changes the machine's files: a directory, a secret minted, restored, rotated
 * or renewed, a file.
 */
export type FileStep = Step & { do: 'mkdir' | 'mint' | 'restore' | 'rotate' | 'renew' | 'write' };

const FILE_STEPS: ReadonlySet<Step['do']> = new Set([
  'mkdir',
  'mint',
  'restore',
  'rotate',
  'renew',
  'write',
]);

export function changesFiles(step: Step): step is FileStep {
  return FILE_STEPS.has(step.do);
}

/** A module's steps, in the order the act takes them. */
export interface ModuleSteps {
  module: string;
  steps: Step[];
}
