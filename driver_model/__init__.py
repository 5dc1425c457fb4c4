"""Model of the picoevb-rdma kernel driver and the XDMA programming model it uses.

Plain Python with no simulator dependency: the register map (:mod:`driver_model.regs`),
the descriptor codec and chain builder (:mod:`driver_model.desc`).
"""
