// SPDX-License-Identifier: MIT
// Language: Verilog 2001
//
// The XDMA register map, descriptor format and error codes of the engine, generated
// from driver_model/regs.py and driver_model/desc.py by `make regmap`: do not edit.
// A bit field is a part-select range (x[`PEVB_F]) with its lowest bit (`PEVB_F_LSB);
// a flag is a bit index (x[`PEVB_B]).

`ifndef PEVB_REGS_VH
`define PEVB_REGS_VH

// BARs of the FPGA function (the BAR id of a completer request) and their sizes
`define PEVB_BAR_USER 3'd0
`define PEVB_BAR_DMA 3'd1
`define PEVB_BAR_AXIB 3'd2
`define PEVB_BAR_USER_ADDR_WIDTH 12
`define PEVB_BAR_DMA_ADDR_WIDTH 16

// DMA BAR offsets: target, channel, register; the targets
`define PEVB_ADDR_TARGET 15:12
`define PEVB_ADDR_TARGET_LSB 12
`define PEVB_ADDR_CHANNEL 11:8
`define PEVB_ADDR_CHANNEL_LSB 8
`define PEVB_ADDR_REG 7:0
`define PEVB_ADDR_REG_LSB 0
`define PEVB_TGT_H2C 4'd0
`define PEVB_TGT_C2H 4'd1
`define PEVB_TGT_IRQ 4'd2
`define PEVB_TGT_CONFIG 4'd3
`define PEVB_TGT_H2C_SGDMA 4'd4
`define PEVB_TGT_C2H_SGDMA 4'd5
`define PEVB_TGT_SGDMA_COMMON 4'd6
`define PEVB_TGT_MSIX 4'd8

// identifier register of every block
`define PEVB_ID_SUBSYSTEM_VALUE 12'h1FC
`define PEVB_ID_VERSION_VALUE 8'h06
`define PEVB_IDENTIFIER(tgt, strm, chn) {`PEVB_ID_SUBSYSTEM_VALUE, (tgt), (strm), 3'd0, (chn), `PEVB_ID_VERSION_VALUE}

// channel registers (H2C and C2H blocks)
`define PEVB_CH_IDENTIFIER 8'h00
`define PEVB_CH_CONTROL 8'h04
`define PEVB_CH_CONTROL_W1S 8'h08
`define PEVB_CH_CONTROL_W1C 8'h0C
`define PEVB_CH_STATUS 8'h40
`define PEVB_CH_STATUS_RC 8'h44
`define PEVB_CH_COMPLETED_COUNT 8'h48
`define PEVB_CH_ALIGNMENTS 8'h4C
`define PEVB_CH_POLL_WB_LO 8'h88
`define PEVB_CH_POLL_WB_HI 8'h8C
`define PEVB_CH_INT_MASK 8'h90
`define PEVB_CH_INT_MASK_W1S 8'h94
`define PEVB_CH_INT_MASK_W1C 8'h98
`define PEVB_CH_PERF_CTRL 8'hC0
`define PEVB_CH_PERF_CYC_LO 8'hC4
`define PEVB_CH_PERF_CYC_HI 8'hC8
`define PEVB_CH_PERF_DATA_LO 8'hCC
`define PEVB_CH_PERF_DATA_HI 8'hD0

// SGDMA registers
`define PEVB_SG_IDENTIFIER 8'h00
`define PEVB_SG_DESC_LO 8'h80
`define PEVB_SG_DESC_HI 8'h84
`define PEVB_SG_DESC_ADJ 8'h88
`define PEVB_SG_CREDITS 8'h8C

// SGDMA common registers
`define PEVB_SGC_IDENTIFIER 8'h00
`define PEVB_SGC_CONTROL 8'h10
`define PEVB_SGC_CONTROL_W1S 8'h14
`define PEVB_SGC_CONTROL_W1C 8'h18
`define PEVB_SGC_CREDIT_MODE 8'h20
`define PEVB_SGC_CREDIT_MODE_W1S 8'h24
`define PEVB_SGC_CREDIT_MODE_W1C 8'h28

// IRQ block registers
`define PEVB_IRQ_IDENTIFIER 8'h00
`define PEVB_IRQ_USER_INT_EN 8'h04
`define PEVB_IRQ_USER_INT_EN_W1S 8'h08
`define PEVB_IRQ_USER_INT_EN_W1C 8'h0C
`define PEVB_IRQ_CHAN_INT_EN 8'h10
`define PEVB_IRQ_CHAN_INT_EN_W1S 8'h14
`define PEVB_IRQ_CHAN_INT_EN_W1C 8'h18
`define PEVB_IRQ_USER_INT_REQ 8'h40
`define PEVB_IRQ_CHAN_INT_REQ 8'h44
`define PEVB_IRQ_USER_INT_PEND 8'h48
`define PEVB_IRQ_CHAN_INT_PEND 8'h4C
`define PEVB_IRQ_USER_VECTOR0 8'h80
`define PEVB_IRQ_USER_VECTOR1 8'h84
`define PEVB_IRQ_USER_VECTOR2 8'h88
`define PEVB_IRQ_USER_VECTOR3 8'h8C
`define PEVB_IRQ_CHAN_VECTOR0 8'hA0
`define PEVB_IRQ_CHAN_VECTOR1 8'hA4

// config block registers
`define PEVB_CFG_IDENTIFIER 8'h00
`define PEVB_CFG_BUSDEV 8'h04
`define PEVB_CFG_MPS 8'h08
`define PEVB_CFG_MRRS 8'h0C
`define PEVB_CFG_SYSTEM_ID 8'h10
`define PEVB_CFG_MSI_ENABLE 8'h14
`define PEVB_CFG_DATA_WIDTH 8'h18
`define PEVB_CFG_PCIE_CONTROL 8'h1C
`define PEVB_CFG_AXI_MPS 8'h40
`define PEVB_CFG_AXI_MRRS 8'h44
`define PEVB_CFG_WR_FLUSH_TIMEOUT 8'h60

// MSI-X table (entry registers, entry size, vectors), the PBA, vector control
`define PEVB_MSIX_ADDR_LO 4'd0
`define PEVB_MSIX_ADDR_HI 4'd4
`define PEVB_MSIX_DATA 4'd8
`define PEVB_MSIX_CTRL 4'd12
`define PEVB_MSIX_ENTRY_SIZE 16
`define PEVB_MSIX_VECTORS 32
`define PEVB_MSIX_PBA 12'hFE0
`define PEVB_MSIX_CTRL_MASKED 0

// channel control bits and writable mask; the poll-mode write-back word
`define PEVB_CTRL_RUN 0
`define PEVB_CTRL_IE_DESC_STOPPED 1
`define PEVB_CTRL_IE_DESC_COMPLETED 2
`define PEVB_CTRL_IE_ALIGN_MISMATCH 3
`define PEVB_CTRL_IE_MAGIC_STOPPED 4
`define PEVB_CTRL_IE_INVALID_LENGTH 5
`define PEVB_CTRL_IE_IDLE_STOPPED 6
`define PEVB_CTRL_NON_INC_MODE 25
`define PEVB_CTRL_POLLMODE_WB_ENABLE 26
`define PEVB_CTRL_STREAM_WB_DISABLE 27
`define PEVB_CTRL_WRITABLE 32'h0EFFFE7F
`define PEVB_WB_COUNT 23:0
`define PEVB_WB_COUNT_LSB 0
`define PEVB_WB_ERROR 31

// channel status bits, error fields, the loggable mask and the event width
`define PEVB_STAT_BUSY 0
`define PEVB_STAT_DESC_STOPPED 1
`define PEVB_STAT_DESC_COMPLETED 2
`define PEVB_STAT_ALIGN_MISMATCH 3
`define PEVB_STAT_MAGIC_STOPPED 4
`define PEVB_STAT_INVALID_LENGTH 5
`define PEVB_STAT_IDLE_STOPPED 6
`define PEVB_STAT_READ_ERROR 13:9
`define PEVB_STAT_READ_ERROR_LSB 9
`define PEVB_STAT_WRITE_ERROR 18:14
`define PEVB_STAT_WRITE_ERROR_LSB 14
`define PEVB_STAT_DESC_ERROR 23:19
`define PEVB_STAT_DESC_ERROR_LSB 19
`define PEVB_STAT_LOGGED_MASK 32'h00FFFE7E
`define PEVB_STAT_EVENT_WIDTH 24

// error codes of the status error fields: PCIe side, card (AXI) side
`define PEVB_PCIE_ERR_UNSUPPORTED_REQUEST 5'h01
`define PEVB_PCIE_ERR_COMPLETER_ABORT 5'h02
`define PEVB_PCIE_ERR_PARITY 5'h04
`define PEVB_PCIE_ERR_POISONED 5'h08
`define PEVB_PCIE_ERR_UNEXPECTED_COMPLETION 5'h10
`define PEVB_AXI_ERR_DECODE 5'h01
`define PEVB_AXI_ERR_SLAVE 5'h02

// other fields and values
`define PEVB_ALIGNMENTS_VALUE 32'h00010140
`define PEVB_SYSTEM_ID_VALUE 32'h0000FF01
`define PEVB_PERF_AUTO 0
`define PEVB_PERF_CLEAR 1
`define PEVB_PERF_RUN 2
`define PEVB_PERF_CTRL 2:0
`define PEVB_PERF_CTRL_LSB 0
`define PEVB_PERF_COUNT_HI 9:0
`define PEVB_PERF_COUNT_HI_LSB 0
`define PEVB_PERF_MAXED 16
`define PEVB_SG_DESC_ADJ_FIELD 5:0
`define PEVB_SG_DESC_ADJ_FIELD_LSB 0
`define PEVB_SG_CREDITS_FIELD 9:0
`define PEVB_SG_CREDITS_FIELD_LSB 0
`define PEVB_SGC_CHANNELS_MASK 32'h000F000F
`define PEVB_SGC_H2C_DESC_HALT 3:0
`define PEVB_SGC_H2C_DESC_HALT_LSB 0
`define PEVB_SGC_C2H_DESC_HALT 19:16
`define PEVB_SGC_C2H_DESC_HALT_LSB 16
`define PEVB_IRQ_VECTOR_MASK 32'h1F1F1F1F
`define PEVB_IRQ_VECTOR_WIDTH 5
`define PEVB_IRQ_VECTOR_STRIDE 8
`define PEVB_IRQ_USER_INT_FIELD 15:0
`define PEVB_IRQ_USER_INT_FIELD_LSB 0
`define PEVB_CFG_BUS_FIELD 15:8
`define PEVB_CFG_BUS_FIELD_LSB 8
`define PEVB_CFG_SIZE_FIELD 2:0
`define PEVB_CFG_SIZE_FIELD_LSB 0
`define PEVB_CFG_MSI_FIELD 0
`define PEVB_CFG_MSIX_FIELD 1
`define PEVB_CFG_DATA_WIDTH_FIELD 2:0
`define PEVB_CFG_DATA_WIDTH_FIELD_LSB 0
`define PEVB_DATA_WIDTH_ENC(w) ((w) == 64 ? 3'd0 : (w) == 128 ? 3'd1 : (w) == 256 ? 3'd2 : (w) == 512 ? 3'd3 : 3'd7)
`define PEVB_CFG_PCIE_CTRL_RELAXED_ORDERING 0
`define PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD 4:0
`define PEVB_CFG_WR_FLUSH_TIMEOUT_FIELD_LSB 0

// user BAR
`define PEVB_USER_LED 8'h00
`define PEVB_USER_RAM_SIZE 8'h04
`define PEVB_USER_MAILBOX 8'h08
`define PEVB_USER_MAILBOX_STATUS 8'h0C
`define PEVB_MAILBOX_DEPTH 16
`define PEVB_MAILBOX_IRQ 0
`define PEVB_MAILBOX_COUNT_FIELD 4:0
`define PEVB_MAILBOX_COUNT_FIELD_LSB 0
`define PEVB_MAILBOX_OVERFLOW_BIT 31
`define PEVB_LED_FIELD 2:0
`define PEVB_LED_FIELD_LSB 0
`define PEVB_LED_RESET_VALUE 3'd7

// descriptors: the DWORD index of each word, control word fields and flag bits,
// the length field, the magic
`define PEVB_DESC_DW_CONTROL 3'd0
`define PEVB_DESC_DW_LENGTH 3'd1
`define PEVB_DESC_DW_SRC_LO 3'd2
`define PEVB_DESC_DW_SRC_HI 3'd3
`define PEVB_DESC_DW_DST_LO 3'd4
`define PEVB_DESC_DW_DST_HI 3'd5
`define PEVB_DESC_DW_NEXT_LO 3'd6
`define PEVB_DESC_DW_NEXT_HI 3'd7
`define PEVB_DESC_MAGIC_FIELD 31:16
`define PEVB_DESC_MAGIC_FIELD_LSB 16
`define PEVB_DESC_NXT_ADJ 13:8
`define PEVB_DESC_NXT_ADJ_LSB 8
`define PEVB_DESC_STOP 0
`define PEVB_DESC_COMPLETED 1
`define PEVB_DESC_EOP 4
`define PEVB_DESC_LEN 27:0
`define PEVB_DESC_LEN_LSB 0
`define PEVB_DESC_MAGIC 16'hAD4B

`endif
