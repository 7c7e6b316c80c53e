"""Words that say nothing about which tool is meant: English function words, the politeness of
requests ("could you please help me…") and the boilerplate of tool descriptions ("use this tool to…").

Action words (`get`, `list`, `find`, `new`, `all`-purpose verbs) are NOT here: they tell tools of one
server apart. Particles that change a verb's meaning (`up`, `down`, `out`, `off`) are kept too.
"""

from __future__ import annotations

_ENGLISH = """
a about above across after afterwards again against all almost along already also although am among
an and another any anybody anyone anyhow anyway anywhere are around as at be became because become
becomes been before being below beside besides between beyond both but by can cannot could did do
does doing done each either else elsewhere enough etc even ever every everybody everyone everywhere
few for from further had has have having he hence her here hers herself him himself his how however
i ie if in into is it its itself just least less many may me meanwhile might mine more moreover most
mostly much must my myself neither never nevertheless no nobody none nor not nowhere of often on
once one only onto or other others otherwise our ours ourselves over per perhaps rather really same
several shall she should since so some somehow someone sometimes somewhere still such than that the
their theirs them themselves then thence there thereafter thereby therefore therein these they this
those though through throughout thus to together too toward towards under until upon us very via was
we well were what whatever when whenever where whereas wherever whether which while who whoever whom
whose why will with within without would yet you your yours yourself yourselves
"""

# How people ask, and what every tool description says about itself.
_REQUESTS = """
able allow allows assist assistant eg hello hey hi help helps kindly let lets like please possible
sure thank thanks tool tools use used uses using want wanted wants need needs needed would wish
"""

STOP_WORDS: frozenset[str] = frozenset((_ENGLISH + _REQUESTS).split())
