import type { Command } from 'commander';

/** Every command path with its subcommands and flags, walked from the program itself (so it never drifts). */
function entries(cmd: Command, prefix: string[] = []): Array<{ path: string; words: string[] }> {
  const words = [...cmd.commands.map((c) => c.name()), ...cmd.options.flatMap((o) => [o.long, o.short].filter((f): f is string => !!f))];
  return [{ path: prefix.join(' '), words }, ...cmd.commands.flatMap((c) => entries(c, [...prefix, c.name()]))];
}

/** Flags that take a value (their value is not a command word). */
function valueFlags(cmd: Command): string[] {
  return [
    ...new Set([
      ...cmd.options.filter((o) => o.required || o.optional).flatMap((o) => [o.long, o.short].filter((f): f is string => !!f)),
      ...cmd.commands.flatMap(valueFlags),
    ]),
  ];
}

/** A bash completion script: the words after `switchyard` (flags and their values skipped) pick the candidates. */
function bashScript(program: Command): string {
  const cases = entries(program)
    .map((e) => `    ${JSON.stringify(e.path)}) words=${JSON.stringify(e.words.join(' '))} ;;`)
    .join('\n');
  return `# switchyard bash completion: eval "$(switchyard completion bash)" (or save it under /etc/bash_completion.d/)
_switchyard() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" words="" i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case "$w" in -*) continue ;; esac
    case " ${valueFlags(program).join(' ')} " in *" \${COMP_WORDS[i-1]} "*) continue ;; esac
    path="\${path:+$path }$w"
  done
  case "$path" in
${cases}
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -F _switchyard switchyard
`;
}

export function completionCommand(program: Command): void {
  program
    .command('completion')
    .description('Print a shell completion script: eval "$(switchyard completion bash)"')
    .argument('[shell]', 'bash', 'bash')
    .action((shell: string) => {
      if (shell !== 'bash') throw new Error(`no completion for '${shell}' (bash only)`);
      process.stdout.write(bashScript(program));
    });
}
