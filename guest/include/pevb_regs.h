/* SPDX-License-Identifier: MIT */
/*
 * The XDMA register map and descriptor format of the engine, generated from
 * driver_model/regs.py and driver_model/desc.py by `make regmap`: do not edit.
 * A bit field F is PEVB_F_SHIFT and PEVB_F_MASK (in place); a flag is a mask.
 */
#ifndef PEVB_REGS_H
#define PEVB_REGS_H

/* BARs of the picoevb card and their sizes */
#define PEVB_BAR_USER 0
#define PEVB_BAR_DMA 1
#define PEVB_BAR_USER_SIZE 0x1000
#define PEVB_BAR_DMA_SIZE 0x10000

/* user BAR registers */
#define PEVB_USER_LED 0
#define PEVB_LED_SHIFT 0
#define PEVB_LED_MASK 7
#define PEVB_USER_RAM_SIZE 4
#define PEVB_USER_MAILBOX 8
#define PEVB_USER_MAILBOX_STATUS 0xC
#define PEVB_MAILBOX_COUNT_SHIFT 0
#define PEVB_MAILBOX_COUNT_MASK 0x1F
#define PEVB_MAILBOX_OVERFLOW 0x80000000U

/* DMA BAR: a register is (target << 12) | (channel << 8) | offset */
#define PEVB_TARGET_SHIFT 12
#define PEVB_CHANNEL_SHIFT 8
#define PEVB_TGT_H2C 0
#define PEVB_TGT_C2H 1
#define PEVB_TGT_IRQ 2
#define PEVB_TGT_CONFIG 3
#define PEVB_TGT_H2C_SGDMA 4
#define PEVB_TGT_C2H_SGDMA 5
#define PEVB_TGT_SGDMA_COMMON 6
#define PEVB_TGT_MSIX 8
#define PEVB_REG(tgt, chn, off) (((tgt) << PEVB_TARGET_SHIFT) | ((chn) << PEVB_CHANNEL_SHIFT) | (off))

/* identifier register of every block */
#define PEVB_ID_SUBSYSTEM_SHIFT 20
#define PEVB_ID_SUBSYSTEM_MASK 0xFFF00000U
#define PEVB_ID_TARGET_SHIFT 16
#define PEVB_ID_TARGET_MASK 0xF0000
#define PEVB_ID_CHANNEL_SHIFT 8
#define PEVB_ID_CHANNEL_MASK 0xF00
#define PEVB_ID_SUBSYSTEM_VALUE 0x1FC

/* channel registers (H2C and C2H blocks) */
#define PEVB_CH_IDENTIFIER 0
#define PEVB_CH_CONTROL 4
#define PEVB_CH_CONTROL_W1S 8
#define PEVB_CH_CONTROL_W1C 0xC
#define PEVB_CH_STATUS 0x40
#define PEVB_CH_STATUS_RC 0x44
#define PEVB_CH_COMPLETED_COUNT 0x48
#define PEVB_CH_ALIGNMENTS 0x4C
#define PEVB_CH_POLL_WB_LO 0x88
#define PEVB_CH_POLL_WB_HI 0x8C
#define PEVB_CH_INT_MASK 0x90
#define PEVB_CH_INT_MASK_W1S 0x94
#define PEVB_CH_INT_MASK_W1C 0x98
#define PEVB_CTRL_RUN 1
#define PEVB_CTRL_IE_DESC_STOPPED 2
#define PEVB_CTRL_IE_DESC_COMPLETED 4
#define PEVB_CTRL_IE_ALIGN_MISMATCH 8
#define PEVB_CTRL_IE_MAGIC_STOPPED 0x10
#define PEVB_CTRL_IE_INVALID_LENGTH 0x20
#define PEVB_CTRL_IE_IDLE_STOPPED 0x40
#define PEVB_CTRL_NON_INC_MODE 0x2000000
#define PEVB_CTRL_POLLMODE_WB_ENABLE 0x4000000
#define PEVB_CTRL_STREAM_WB_DISABLE 0x8000000
#define PEVB_CTRL_IE_ALL 0xFFFE7E
#define PEVB_STAT_BUSY 1
#define PEVB_STAT_DESC_STOPPED 2
#define PEVB_STAT_DESC_COMPLETED 4
#define PEVB_STAT_ALIGN_MISMATCH 8
#define PEVB_STAT_MAGIC_STOPPED 0x10
#define PEVB_STAT_INVALID_LENGTH 0x20
#define PEVB_STAT_IDLE_STOPPED 0x40
#define PEVB_STAT_ERROR_MASK 0xFFFE38

/* SGDMA registers (H2C and C2H SGDMA blocks) and SGDMA common */
#define PEVB_SG_DESC_LO 0x80
#define PEVB_SG_DESC_HI 0x84
#define PEVB_SG_DESC_ADJ 0x88
#define PEVB_SG_CREDITS 0x8C
#define PEVB_SGC_CONTROL 0x10
#define PEVB_SGC_CONTROL_W1S 0x14
#define PEVB_SGC_CONTROL_W1C 0x18

/* IRQ block */
#define PEVB_IRQ_USER_INT_EN 4
#define PEVB_IRQ_USER_INT_EN_W1S 8
#define PEVB_IRQ_USER_INT_EN_W1C 0xC
#define PEVB_IRQ_CHAN_INT_EN 0x10
#define PEVB_IRQ_CHAN_INT_EN_W1S 0x14
#define PEVB_IRQ_CHAN_INT_EN_W1C 0x18
#define PEVB_IRQ_USER_INT_REQ 0x40
#define PEVB_IRQ_CHAN_INT_REQ 0x44
#define PEVB_IRQ_USER_INT_PEND 0x48
#define PEVB_IRQ_CHAN_INT_PEND 0x4C
#define PEVB_IRQ_USER_VECTOR0 0x80
#define PEVB_IRQ_USER_VECTOR1 0x84
#define PEVB_IRQ_USER_VECTOR2 0x88
#define PEVB_IRQ_USER_VECTOR3 0x8C
#define PEVB_IRQ_CHAN_VECTOR0 0xA0
#define PEVB_IRQ_CHAN_VECTOR1 0xA4

/* config block */
#define PEVB_CFG_MSI_ENABLE 0x14

/* descriptors: 32 bytes, 32-byte aligned, little endian */
#define PEVB_DESC_SIZE 0x20
#define PEVB_DESC_MAGIC 0xAD4B
#define PEVB_DESC_MAGIC_SHIFT 16
#define PEVB_DESC_MAGIC_MASK 0xFFFF0000U
#define PEVB_DESC_NXT_ADJ_SHIFT 8
#define PEVB_DESC_NXT_ADJ_MASK 0x3F00
#define PEVB_DESC_STOP 1
#define PEVB_DESC_COMPLETED 2
#define PEVB_DESC_EOP 0x10
#define PEVB_DESC_MAX_LEN 0xFFFFFFF
#define PEVB_DESC_ADJ_MAX 0x3F

#endif /* PEVB_REGS_H */
