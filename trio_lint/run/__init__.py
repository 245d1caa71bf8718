"""One invocation of trio-lint: a `RunRequest` (request) becomes files (discovery), answered
from the cache (cache, cache_keys, digest) or linted, in a process pool when it pays, with fixes
written atomically (fileio); `invocation.execute` is the entry."""
