# berth completion for fish: berth completion fish > ~/.config/fish/completions/berth.fish
# At each Tab berth itself lists the candidates for the words typed so far, a line each.
complete -c berth -f -a '(berth __complete (commandline -opc)[2..-1] "$(commandline -ct)" 2>/dev/null)'
