#compdef berth
# berth completion for zsh: source <(berth completion zsh), or save it as _berth in $fpath
_berth() {
  local -a candidates
  # At each Tab berth itself lists the candidates for the words typed so far, a line each.
  candidates=("${(@f)$(berth __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=("${(@)candidates:#}")
  compadd -a candidates
}
if [[ "${funcstack[1]}" == _berth ]]; then _berth "$@"; else compdef _berth berth; fi
