"""Rules made in a loop (one per study, group, figure): Snakemake evaluates a rule's `shell:` again when the job
runs, after the loop has ended, so a command that reads a loop variable runs with the last iteration's value (a
timing run computed with every core; every QMIX group got the last group's flags), while a dry run prints the
parse-time command. Anything that differs per rule goes through `params:`, which is bound when the rule is made."""

from __future__ import annotations

import re

import pytest
from conftest import ROOT

RULE_FILES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))


def loop_shell_leaks(text: str) -> list[str]:
    """For every top-level `for` loop: the loop's variables (its targets and names assigned in its body) that a
    `shell:` directive inside it reads."""
    leaks = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        head = re.match(r"for (.+?) in .+:$", line)
        if not head:
            continue
        body = []
        for following in lines[i + 1:]:
            if following.strip() and not following.startswith(" "):
                break
            body.append(following)
        names = set(re.findall(r"[A-Za-z_]\w*", head.group(1)))
        names |= {m.group(1) for b in body if (m := re.match(r"    (\w+)\s*=", b))}
        for j, b in enumerate(body):
            indent = re.match(r"(\s*)shell:\s*(.*)$", b)
            if not indent:
                continue
            expr = [indent.group(2)]
            for more in body[j + 1:]:
                if more.strip() and len(more) - len(more.lstrip()) <= len(indent.group(1)):
                    break
                expr.append(more)
            used = names & set(re.findall(r"[A-Za-z_]\w*", " ".join(expr)))
            leaks += [f"line {i + 1 + j + 1}: shell reads {sorted(used)}"] if used else []
    return leaks


@pytest.mark.parametrize("path", RULE_FILES, ids=lambda p: p.name)
def test_no_rule_made_in_a_loop_reads_a_loop_variable_in_its_shell_command(path):
    assert loop_shell_leaks(path.read_text()) == []


def test_the_check_finds_a_loop_variable_in_a_shell_command():
    leaky = ('for _kind, (_files, _alone) in GROUPS.items():\n    _threads = 1 if _alone else "{threads}"\n\n'
             '    rule:\n        name:\n            f"train_{_kind}"\n        shell:\n'
             '            f"effmarl train --set threads={_threads}"\n')
    assert loop_shell_leaks(leaky) == ["line 7: shell reads ['_threads']"]
    assert loop_shell_leaks(leaky.replace("{_threads}", "{{params.threads}}")) == []
