import { renderFile } from '../catalog.ts';
import type { Machine } from '../machines/machine.ts';
import { checkName } from '../names.ts';
import { checkDigest, sealPreview } from '../preview.ts';
import { mintSecret, redactSecrets, SECRET_MODE, secretText } from '../secrets.ts';
import { managedOn, withManaged } from '../state.ts';
import {
  type CommandContext,
  type CommandFunction,
  checkNode,
  reachNode,
  refuse,
} from './context.ts';
import { type ConvergePlan, planConverge, type Step } from './converge-plan.ts';

/**
 * Brings a node to its assignments: a preview without `yes`; with `yes` and the
 * preview's digest, the same plan made again under the lock and carried out step
 * by step, each step recorded as it is done so that a later converge carries on.
 */
export const converge: CommandFunction = async (request, context) => {
  const { node } = request;
  const filter = request.filter === '' ? undefined : request.filter;
  const refusal =
    checkNode(context, node) ?? (filter === undefined ? undefined : checkName('module', filter));
  if (refusal) return refuse(refusal);

  const reached = await reachNode(context, node);
  if ('refusal' in reached) return refuse(reached.refusal);
  const { machine } = reached;

  let planned: Awaited<ReturnType<typeof planConverge>>;
  try {
    planned = await planConverge(context.stores, machine, node, filter);
  } catch (error) {
    return refuse(`${node} cannot be surveyed: ${(error as Error).message}`);
  }
  const { plan, basis } = planned;
  const digest = await sealPreview(context.stores, 'converge', plan, basis, context.now());
  const title = filter ? `converge ${node}, ${filter} alone` : `converge ${node}`;
  const nothingToDo = plan.modules.length === 0 && plan.blockers.length === 0;

  if (!request.yes) return { said: describePreview(title, node, plan, nothingToDo, digest) };

  if (request.digest !== undefined) {
    const changed = checkDigest(context.stores, request.digest, digest, basis);
    if (changed) return refuse(changed);
  } else if (!nothingToDo) {
    return refuse(
      `a converge acts on a preview: preview it (berth converge ${node}${filter ? ` --filter ${filter}` : ''}), then act with yes and its digest`,
    );
  }
  if (plan.blockers.length > 0) {
    return refuse(
      `the act is refused while ${plan.blockers.length === 1 ? 'a blocker stands' : 'blockers stand'}: ${plan.blockers.join('; ')}`,
    );
  }
  if (nothingToDo) return { said: `${node} is as assigned: nothing to do` };
  return carryOut(plan, node, machine, context);
};

function describePreview(
  title: string,
  node: string,
  plan: ConvergePlan,
  nothingToDo: boolean,
  digest: string,
) {
  const lines = [title];
  for (const { module, action, steps } of plan.modules) {
    lines.push(`${action} ${module}:`);
    for (const step of steps) lines.push(`  ${previewStep(step, node)}`);
  }
  for (const blocker of plan.blockers) lines.push(`blocked: ${blocker}`);
  if (plan.blockers.length > 0) lines.push('the act will be refused while a blocker stands');
  if (nothingToDo) lines.push(`${node} is as assigned: nothing to do, so yes alone is enough`);
  lines.push(`digest ${digest}`);
  return lines.join('\n');
}

function previewStep(step: Step, node: string): string {
  switch (step.do) {
    case 'manage':
      return step.started
        ? 'record that berth manages it'
        : 'record that berth manages it, not yet started';
    case 'create':
      return `create ${step.path}`;
    case 'mint':
      return `mint ${step.secret} into the vault and write it to ${step.path}`;
    case 'restore':
      return `restore ${step.secret} from the vault to ${step.path}`;
    case 'keep':
      return `read ${step.secret} into the vault from ${step.path}`;
    case 'write':
      return `write ${step.path} (mode ${step.mode})${step.why}`;
    case 'start':
      return `run start: ${step.script}`;
    case 'stop':
      return `run stop: ${step.script}`;
    case 'release':
      return `stop managing it; its data, secrets and files stay on ${node}`;
  }
}

/** Carries out the plan in order; the first failing step stops it, with what was done said. */
async function carryOut(
  plan: ConvergePlan,
  node: string,
  machine: Machine,
  context: CommandContext,
) {
  const said: string[] = [];
  for (const { module, steps } of plan.modules) {
    for (const step of steps) {
      if (context.signal?.aborted) {
        return refuse(
          `converge of ${node} stopped before ${module}'s next step: ${stopReason(context.signal)}`,
          said.join('\n'),
        );
      }
      try {
        const done = await doStep(step, node, machine, context);
        said.push(done);
        context.progress?.(done);
      } catch (error) {
        return refuse(
          `converge of ${node} stopped at ${module}: ${(error as Error).message}`,
          said.join('\n'),
        );
      }
    }
  }
  said.push(`${node} is as assigned`);
  return { said: said.join('\n') };
}

async function doStep(
  step: Step,
  node: string,
  machine: Machine,
  context: CommandContext,
): Promise<string> {
  const { stores } = context;
  const { module } = step;
  const at = () => context.now().toISOString();
  const record = (started: boolean) =>
    stores.saveState(
      withManaged(stores.state(), node, module, {
        since: managedOn(stores.state(), node)[module]?.since ?? at(),
        via: managedOn(stores.state(), node)[module]?.via ?? 'converge',
        started,
      }),
    );
  switch (step.do) {
    case 'manage':
      await record(step.started);
      return `berth manages ${module} on ${node}`;
    case 'create':
      await machine.makeDirectory(step.path).catch(fail(`create ${step.path}`));
      return `created ${step.path}`;
    case 'mint': {
      const value = mintSecret(step.bytes);
      await stores.vault.put(node, module, step.secret, {
        value,
        origin: 'minted by berth',
        at: at(),
      });
      await machine.write(step.path, value, SECRET_MODE).catch(fail(`write ${step.path}`));
      return `minted ${step.secret} into the vault and wrote it to ${step.path}`;
    }
    case 'restore': {
      const kept = stores.vault.get(node, module, step.secret);
      if (!kept) throw new Error(`the vault no longer holds ${step.secret}`);
      await machine.write(step.path, kept.value, SECRET_MODE).catch(fail(`write ${step.path}`));
      return `restored ${step.secret} from the vault to ${step.path}`;
    }
    case 'keep': {
      const value = await machine.read(step.path);
      if (!value?.length) throw new Error(`${step.path} is gone from ${node}`);
      await stores.vault.put(node, module, step.secret, {
        value,
        origin: `found on ${node} at ${step.path}`,
        at: at(),
      });
      return `read ${step.secret} into the vault from ${step.path}`;
    }
    case 'write': {
      const entry = await stores.catalog.entry(module);
      if (!('definition' in entry)) throw new Error(`the definition of ${module} is gone`);
      const file = entry.definition.files[step.path];
      if (!file) throw new Error(`the definition of ${module} no longer has ${step.path}`);
      const values: Record<string, string> = {};
      for (const secret of Object.keys(entry.definition.secrets)) {
        const kept = stores.vault.get(node, module, secret);
        if (kept) values[secret] = secretText(kept.value);
      }
      const content = new TextEncoder().encode(renderFile(file.content, values));
      await machine
        .write(step.path, content, Number.parseInt(step.mode, 8))
        .catch(fail(`write ${step.path}`));
      return `wrote ${step.path}`;
    }
    case 'start':
    case 'stop': {
      const result = await machine.run(
        step.script,
        { BERTH_NODE: node, BERTH_MODULE: module },
        context.signal,
      );
      if (context.signal?.aborted) {
        throw new Error(`${step.do} of ${module} was stopped: ${stopReason(context.signal)}`);
      }
      if (result.code !== 0) {
        const shown = redactSecrets(result.output, stores.vault.onNode(node));
        const output = shown ? `: ${shown}` : '';
        throw new Error(`${step.do} of ${module} failed (exit ${result.code})${output}`);
      }
      if (step.do === 'start') await record(true);
      return `ran ${step.do} of ${module}`;
    }
    case 'release':
      await stores.saveState(withManaged(stores.state(), node, module, undefined));
      return `released ${module}: berth no longer manages it on ${node}; its data, secrets and files stay`;
  }
}

function fail(what: string) {
  return (error: Error): never => {
    const code = (error as { code?: string }).code;
    throw new Error(`${what} failed: ${code === 'EACCES' ? 'permission denied' : error.message}`);
  };
}

/** Why an act was told to stop, in words (the abort reason, when it is text). */
function stopReason(signal: AbortSignal): string {
  return typeof signal.reason === 'string' ? signal.reason : 'berth was told to stop';
}
