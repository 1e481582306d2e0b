# berth completion for bash: source <(berth completion bash)
_berth() {
  COMPREPLY=()
  local candidate
  # At each Tab berth itself lists the candidates for the words typed so far, a line each.
  while IFS= read -r candidate; do
    # bash replaces only what follows an & (a word break of its own): @web&@eu is offered as @eu.
    COMPREPLY+=("${candidate##*&}")
  done < <(berth __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
}
complete -o default -F _berth berth
