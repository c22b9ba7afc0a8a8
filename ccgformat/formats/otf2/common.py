"""Constants shared by the OTF2 reader and exporter."""

from __future__ import annotations

from ...model import EventKind

__all__ = ["GENERIC_PARAMETER", "MARKER_PARAMETER", "P2P_RECORDS", "UINT64", "UNDEFINED_UINT32"]

#: A ParameterInt event of the parameter "MARKER <n>" is a MARKER event of type n; a
#: ParameterString event of the parameter "GENERIC <kind>" a GENERIC event of that kind
#: (how the exporter writes the events of archives not from OTF2).
MARKER_PARAMETER = "MARKER"
GENERIC_PARAMETER = "GENERIC"
#: The OTF2 record of each point-to-point event kind.
P2P_RECORDS = {EventKind.SEND: "MpiSend", EventKind.RECV: "MpiRecv", EventKind.ISEND: "MpiIsend",
               EventKind.IRECV: "MpiIrecv"}
UNDEFINED_UINT32 = 0xFFFFFFFF
UINT64 = (1 << 64) - 1                  #: also OTF2's undefined timestamp
