"""Shell completion scripts (bash, zsh, fish), generated from the argparse parser itself.

``idlgen completion bash`` prints a script that completes commands, each command's options and
the choices of options such as ``--format``; other words complete as file names. Generated from
the parser so that it never drifts from the real options.
"""

from __future__ import annotations

import argparse
import shlex

__all__ = ["SHELLS", "script"]

SHELLS = ("bash", "zsh", "fish")


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:  # argparse exposes subparsers only through this
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _options(p: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """Option strings, and the fixed choices of those options that take one."""
    opts: list[str] = []
    choices: dict[str, list[str]] = {}
    for a in p._actions:
        opts.extend(a.option_strings)
        if a.option_strings and a.choices:
            for o in a.option_strings:
                choices[o] = [str(c) for c in a.choices]
    return opts, choices


def _bash(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    top, _ = _options(parser)
    lines = [
        '# idlgen bash completion: eval "$(idlgen completion bash)"',
        "_idlgen() {",
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i',
        "    for ((i = 1; i < COMP_CWORD; i++)); do",
        '        case "${COMP_WORDS[i]}" in -*) ;; *) cmd="${COMP_WORDS[i]}"; break ;; esac',
        "    done",
        '    local words=""',
        '    case "$cmd:$prev" in',
    ]
    for name, sub in sorted(cmds.items()):
        _, choices = _options(sub)
        for opt, vals in sorted(choices.items()):
            lines.append(f"        {name}:{opt}) words={shlex.quote(' '.join(vals))} ;;")
    lines.append("    esac")
    lines.append('    if [[ -z "$words" ]]; then')
    lines.append('        case "$cmd" in')
    lines.append(f"            \"\") words={shlex.quote(' '.join(sorted(cmds) + top))} ;;")
    for name, sub in sorted(cmds.items()):
        opts, _ = _options(sub)
        lines.append(f"            {name}) words={shlex.quote(' '.join(opts))} ;;")
    positional = [
        f"                {name}) words={shlex.quote(' '.join(str(c) for c in a.choices))} ;;"
        for name, sub in sorted(cmds.items())
        for a in sub._actions
        if not a.option_strings and a.choices
    ]
    lines += [
        "        esac",
        '        if [[ -n "$cmd" && "$cur" != -* ]]; then',
        '            case "$cmd" in',
        *positional,
        '                *) COMPREPLY=($(compgen -f -- "$cur")); return ;;',
        "            esac",
        "        fi",
        "    fi",
        '    COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o filenames -o bashdefault -F _idlgen idlgen",
        "",
    ]
    return "\n".join(lines)


def _zsh(parser: argparse.ArgumentParser) -> str:
    # zsh runs the bash function through bashcompinit: one implementation, both shells.
    return (
        '#compdef idlgen\n# idlgen zsh completion: eval "$(idlgen completion zsh)"\n'
        "autoload -U +X bashcompinit && bashcompinit\n" + _bash(parser)
    )


def _fish_quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _fish(parser: argparse.ArgumentParser) -> str:
    cmds = _commands(parser)
    names = " ".join(sorted(cmds))
    out = [
        "# idlgen fish completion: idlgen completion fish | source",
        "complete -c idlgen -f",
        "complete -c idlgen -l version -d 'print the version'",
    ]
    for name, sub in sorted(cmds.items()):
        desc = (sub.description or "").split("\n")[0]
        out.append(
            f"complete -c idlgen -n 'not __fish_seen_subcommand_from {names}' -a {name} "
            f"-d {_fish_quote(desc)}"
        )
        for a in sub._actions:
            for o in a.option_strings:
                flag = f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}"
                line = f"complete -c idlgen -n '__fish_seen_subcommand_from {name}' {flag}"
                if a.choices:
                    line += f" -x -a {_fish_quote(' '.join(str(c) for c in a.choices))}"
                elif a.nargs != 0:
                    line += " -r -F"
                if a.help and a.help != argparse.SUPPRESS:
                    line += f" -d {_fish_quote(a.help)}"
                out.append(line)
        out.append(f"complete -c idlgen -n '__fish_seen_subcommand_from {name}' -F")
    return "\n".join(out) + "\n"


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](parser)
