import { didYouMean } from '../did-you-mean.ts';
import { ownValue } from '../own-record.ts';
import { COMPLETE } from './complete-word.ts';
import { EXIT, type Io, UsageError } from './io.ts';
import { SHELLS } from './shells.ts';

/**
 * The completion scripts. Each is thin: at a Tab it asks `berth __complete` with the
 * words typed so far, so that commands, flags, nodes, groups and modules are listed by
 * berth itself, from the berth.json and catalog of the state directory in use.
 */
const SCRIPTS: Record<string, string> = {
  bash: `# berth completion for bash: source <(berth completion bash)
_berth() {
  local IFS=$'\\n'
  COMPREPLY=($(berth ${COMPLETE} "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
  # bash replaces only what follows an & (a word break of its own): @web&@eu is offered as @eu.
  COMPREPLY=("\${COMPREPLY[@]##*&}")
}
complete -o default -F _berth berth
`,
  zsh: `#compdef berth
# berth completion for zsh: source <(berth completion zsh), or save it as _berth in $fpath
_berth() {
  local -a candidates
  candidates=("\${(@f)$(berth ${COMPLETE} "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=("\${(@)candidates:#}")
  compadd -a candidates
}
if [[ "\${funcstack[1]}" == _berth ]]; then _berth "$@"; else compdef _berth berth; fi
`,
  fish: `# berth completion for fish: berth completion fish > ~/.config/fish/completions/berth.fish
complete -c berth -f -a '(berth ${COMPLETE} (commandline -opc)[2..-1] "$(commandline -ct)" 2>/dev/null)'
`,
};

/** \`berth completion bash|zsh|fish\`: prints that shell's script. */
export function printCompletion(shell: string | undefined, io: Io): number {
  if (shell === undefined)
    throw new UsageError(`berth completion needs a shell: ${SHELLS.join(', ')}`);
  const script = ownValue(SCRIPTS, shell);
  if (script === undefined)
    throw new UsageError(
      `berth completion has no script for ${JSON.stringify(shell)}${didYouMean(shell, SHELLS)}; it has ${SHELLS.join(', ')}`,
    );
  io.out(script.trimEnd());
  return EXIT.done;
}
