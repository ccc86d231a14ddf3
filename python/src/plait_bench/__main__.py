# A Ctrl-C before entry.main() has its own handling (while this module imports it) ends the program
# with the same one line and status 130: the handler raises SystemExit where the signal lands, which
# prints no traceback. main() puts Python's own handler back first thing, inside its try block.
# _signal, not signal: the builtin module loads at once, where signal's Python wrapper imports enum
# (milliseconds in which a Ctrl-C would still meet Python's default handler).
import _signal
import sys


def _interrupted_early(signum, frame):
    sys.stderr.write("\nplait-bench: interrupted\n")
    sys.exit(130)


_signal.signal(_signal.SIGINT, _interrupted_early)

from .entry import main  # noqa: E402  (after the handler, on purpose)

main()
