#!/usr/bin/env python3
"""Times commands run one at a time with a pause before each, as a person runs them.

    benches/spaced.py [--runs N] [--gap SECONDS] [--] 'COMMAND' ['COMMAND' ...]

Each COMMAND is one argument, split as a shell splits words (no shell runs it; its
standard output and error go to /dev/null). Every round runs each command once, in
turn, the order reversed every second round, after sleeping `--gap` seconds (default
3) before each run. Prints a Markdown table: the median, mean, least and most wall
time of each command, and the median of its per-round ratios to the first command
(each round's two runs are close in time, so the ratio is steadier than either time).
Exits 1, naming the command, when a run exits with a status other than 0.

`scripts/bench.sh` times runs back to back (hyperfine): memory a run frees is handed
to the next one at once. A run after a pause can find the machine in another state;
on a virtual machine whose host takes back the guest's free memory (virtio-balloon's
free page reporting), what the process touches first costs more. benches/ROUNDS.md
(the round of runs spaced apart) says what this measured. `--gap 0` runs back to back.

Only the Python standard library.
"""

import argparse
import os
import shlex
import statistics
import sys
import time


def parse_arguments(argv):
    parser = argparse.ArgumentParser(
        prog="benches/spaced.py",
        description="Times commands run one at a time with a pause before each.",
    )
    parser.add_argument("--runs", type=int, default=10, help="rounds (default 10)")
    parser.add_argument(
        "--gap", type=float, default=3.0, help="seconds of pause before each run (default 3)"
    )
    parser.add_argument("commands", nargs="+", help="each command as one argument")
    arguments = parser.parse_args(argv)
    if arguments.runs < 1:
        parser.error("--runs must be at least 1")
    if arguments.gap < 0:
        parser.error("--gap must not be negative")
    return arguments


def run_once(command, null):
    """The wall time of one run of `command` in milliseconds, and its exit status."""
    start = time.perf_counter()
    pid = os.fork()
    if pid == 0:
        try:
            os.dup2(null, 1)
            os.dup2(null, 2)
            os.execvp(command[0], command)
        finally:
            os._exit(127)
    _, status = os.waitpid(pid, 0)
    return (time.perf_counter() - start) * 1000, os.waitstatus_to_exitcode(status)


def main(argv):
    arguments = parse_arguments(argv)
    commands = [shlex.split(c) for c in arguments.commands]
    for text, words in zip(arguments.commands, commands):
        if not words:
            sys.exit(f"benches/spaced.py: the command {text!r} is empty")
    walls = [[] for _ in commands]
    null = os.open(os.devnull, os.O_WRONLY)
    for round_ in range(arguments.runs):
        order = list(range(len(commands)))
        if round_ % 2:
            order.reverse()
        for i in order:
            time.sleep(arguments.gap)
            wall, code = run_once(commands[i], null)
            if code != 0:
                sys.exit(
                    f"benches/spaced.py: {arguments.commands[i]!r} exited with {code}"
                )
            walls[i].append(wall)
    print(f"{arguments.runs} rounds, {arguments.gap:g} s before each run\n")
    print("| command | median ms | mean | least | most | ratio to the first |")
    print("|---|---:|---:|---:|---:|---:|")
    for text, times in zip(arguments.commands, walls):
        ratio = statistics.median(t / f for t, f in zip(times, walls[0]))
        print(
            f"| `{text}` | {statistics.median(times):.2f} | {statistics.mean(times):.2f} "
            f"| {min(times):.2f} | {max(times):.2f} | {ratio:.3f} |"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
