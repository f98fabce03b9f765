"""The process's long-lived objects, kept out of the garbage collector's way.

CPython's full collection walks every object the collector tracks. Once a worker has
started, some 190,000 of them live as long as it does (routes, schemas, templates,
catalogs, caches) and none of them is ever garbage; a full pass over them took 80 to 120
ms of CPU (300-700 ms of wall time on the loaded development machine), during which the
event loop answers nothing. Under an inbox load one came every 15-30 s. ``gc.freeze()`` moves
what is alive at the end of start-up to a generation the collector never walks, so a
full pass walks only what was made since: about a millisecond. Objects frozen this way
are still freed when their last reference goes; only a reference cycle among them would
never be collected, and start-up leaves none behind it (a collection runs first).
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Collect what start-up left behind, then keep the survivors out of every later
    collection. Called once, when the application has started."""
    gc.collect()
    gc.freeze()
