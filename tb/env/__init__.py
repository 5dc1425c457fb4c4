"""The testbench environment: the system (root complex, switch, the FPGA's hard-IP model
bound to the RTL, the GPU endpoint), link taps and the protocol checker, fault injection,
build profiles, the driver model's platform, the card RAM backdoor and the shared test
harness. Nothing here depends on :mod:`tb.debug`, and importing it patches nothing: the
simulation models of the fabric and the hard IP (:mod:`tb.models`) are installed by the
system builder."""
