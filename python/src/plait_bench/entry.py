"""The plait-bench command's entry point. A Ctrl-C while the study tool's modules load (click,
rich, matplotlib: a second or more) or inside a command that has no handler of its own ends it
with one line and status 130, never a traceback; `run` and `tour` catch it themselves first (they
say how to resume)."""

import sys

EXIT_INTERRUPTED = 130


def _interrupted() -> None:
    sys.stderr.write("\nplait-bench: interrupted\n")
    sys.exit(EXIT_INTERRUPTED)


def main() -> None:
    try:
        from .cli import main as cli_main
    except KeyboardInterrupt:
        _interrupted()
    try:
        cli_main()
    except KeyboardInterrupt:
        _interrupted()
