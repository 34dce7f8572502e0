"""pfc-victim: congestion spreading under PFC, a victim flow (docs/models/buffer.md).

No published number is entered (``PUBLISHED`` is empty, so a reproduction's ``published.md`` says
none was): the DCQCN paper's PFC measurements (Zhu et al., SIGCOMM 2015) could not be read beyond
its abstract, the PFC deadlock paper (Hu et al., HotNets 2016) was not read for numbers, and
neither measured this scenario. docs/models/buffer.md says what the
experiment checks instead.
"""

from __future__ import annotations

from typing import List

PUBLISHED: List[dict] = []
