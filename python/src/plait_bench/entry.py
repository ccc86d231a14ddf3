"""The plait-bench command's entry point. A Ctrl-C while the study tool's modules load (click,
rich, matplotlib: a second or more) or inside a command that has no handler of its own ends it
with one line and status 130, never a traceback; `run` and `tour` catch it themselves first (they
say how to resume)."""

import signal
import sys

EXIT_INTERRUPTED = 130


def _interrupted() -> None:
    sys.stderr.write("\nplait-bench: interrupted\n")
    sys.exit(EXIT_INTERRUPTED)


def main() -> None:
    try:
        # From here on a Ctrl-C is a KeyboardInterrupt again (`run` and `tour` catch it to say how
        # to resume); before, __main__'s early handler ended the program with the same line.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        import click

        from .cli import main as cli_main
    except KeyboardInterrupt:
        _interrupted()
    # Not click's standalone mode: it turns a Ctrl-C inside a command into "Aborted!" and status 1.
    # The rest of what standalone mode does is done here: a usage or command error shown with its
    # status, an explicit exit's status returned.
    try:
        rv = cli_main.main(standalone_mode=False)
    except (KeyboardInterrupt, click.exceptions.Abort):
        _interrupted()
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)
