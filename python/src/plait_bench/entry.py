"""The plait-bench command's entry point. A Ctrl-C while the study tool's modules load (click,
rich, matplotlib: a second or more) or inside a command that has no handler of its own ends it
with one line and status 130, never a traceback; `run` and `tour` catch it themselves first (they
say how to resume)."""

import os
import signal
import sys

EXIT_INTERRUPTED = 130


def _interrupted_now(signum, frame) -> None:
    sys.stderr.write("\nplait-bench: interrupted\n")
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)


def _interrupted() -> None:
    sys.stderr.write("\nplait-bench: interrupted\n")
    sys.exit(EXIT_INTERRUPTED)


def main() -> None:
    # While the modules load, a Ctrl-C ends the process at once from the handler. Not by raising
    # KeyboardInterrupt: a signal that lands while the import machinery runs a weakref callback
    # (importlib's module-lock clean-up) has its exception printed as "Exception ignored" and
    # dropped, and the command then ran on. Nothing is written before the command starts, so
    # there is nothing to finish.
    signal.signal(signal.SIGINT, _interrupted_now)
    import click

    from .cli import main as cli_main

    # Not click's standalone mode: it turns a Ctrl-C inside a command into "Aborted!" and status 1.
    # The rest of what standalone mode does is done here: a usage or command error shown with its
    # status, an explicit exit's status returned.
    try:
        # From here on a Ctrl-C is a KeyboardInterrupt (`run` and `tour` catch it to say how to
        # resume; what they stored stays).
        signal.signal(signal.SIGINT, signal.default_int_handler)
        rv = cli_main.main(standalone_mode=False)
    except (KeyboardInterrupt, click.exceptions.Abort):
        _interrupted()
    except click.ClickException as e:
        e.show()
        sys.exit(e.exit_code)
    sys.exit(rv if isinstance(rv, int) else 0)
