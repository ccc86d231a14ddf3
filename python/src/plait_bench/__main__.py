# A Ctrl-C before entry.main() has its own handling (while this module imports it) ends the program
# with the same one line and status 130, at once (entry.py says why not by an exception). _signal,
# not signal: the builtin module loads at once, where signal's Python wrapper imports enum
# (milliseconds in which a Ctrl-C would still meet Python's default handler). A Ctrl-C that lands
# before the handler is in place raises KeyboardInterrupt here: caught, the same line.
try:
    import _signal
    import os
    import sys

    def _interrupted_early(signum, frame):
        sys.stderr.write("\nplait-bench: interrupted\n")
        sys.stderr.flush()
        os._exit(130)

    _signal.signal(_signal.SIGINT, _interrupted_early)
except KeyboardInterrupt:
    __import__("sys").stderr.write("\nplait-bench: interrupted\n")
    raise SystemExit(130) from None

from .entry import main  # noqa: E402  (after the handler, on purpose)

main()
