// SPDX-License-Identifier: MIT
// Language: Verilog 2001

`resetall
`timescale 1ns / 1ps
`default_nettype none

/*
 * Routes the H2C write bursts of pevb_axi_wr either to the AXI4 master
 * (memory-mapped channels) or to the ring buffer of a stream channel (s_aw_int
 * with the port number, given with each burst address).  W beats follow their
 * burst in address order; write responses return to pevb_axi_wr in burst
 * order, the master's as it gives them, a ring burst's (OKAY) once its last
 * beat is written.
 */
module pevb_axi_wr_route #
(
    parameter DATA_WIDTH = 64,
    parameter ADDR_WIDTH = 64,
    parameter ID_WIDTH = 4,
    // stream ports (1 to 4)
    parameter PORTS = 1,
    // bursts between address and response (power of two)
    parameter DEPTH = 16
)
(
    input  wire                       clk,
    input  wire                       rst,

    /* From pevb_axi_wr */
    input  wire [ID_WIDTH-1:0]        s_axi_awid,
    input  wire [ADDR_WIDTH-1:0]      s_axi_awaddr,
    input  wire [7:0]                 s_axi_awlen,
    input  wire [2:0]                 s_axi_awsize,
    input  wire [1:0]                 s_axi_awburst,
    input  wire                       s_axi_awlock,
    input  wire [3:0]                 s_axi_awcache,
    input  wire [2:0]                 s_axi_awprot,
    input  wire                       s_axi_awvalid,
    output wire                       s_axi_awready,
    input  wire                       s_aw_int,
    input  wire [1:0]                 s_aw_port,
    input  wire [DATA_WIDTH-1:0]      s_axi_wdata,
    input  wire [DATA_WIDTH/8-1:0]    s_axi_wstrb,
    input  wire                       s_axi_wlast,
    input  wire                       s_axi_wvalid,
    output wire                       s_axi_wready,
    output wire [ID_WIDTH-1:0]        s_axi_bid,
    output wire [1:0]                 s_axi_bresp,
    output wire                       s_axi_bvalid,
    input  wire                       s_axi_bready,

    /* AXI4 master write channels */
    output wire [ID_WIDTH-1:0]        m_axi_awid,
    output wire [ADDR_WIDTH-1:0]      m_axi_awaddr,
    output wire [7:0]                 m_axi_awlen,
    output wire [2:0]                 m_axi_awsize,
    output wire [1:0]                 m_axi_awburst,
    output wire                       m_axi_awlock,
    output wire [3:0]                 m_axi_awcache,
    output wire [2:0]                 m_axi_awprot,
    output wire                       m_axi_awvalid,
    input  wire                       m_axi_awready,
    output wire [DATA_WIDTH-1:0]      m_axi_wdata,
    output wire [DATA_WIDTH/8-1:0]    m_axi_wstrb,
    output wire                       m_axi_wlast,
    output wire                       m_axi_wvalid,
    input  wire                       m_axi_wready,
    input  wire [ID_WIDTH-1:0]        m_axi_bid,
    input  wire [1:0]                 m_axi_bresp,
    input  wire                       m_axi_bvalid,
    output wire                       m_axi_bready,

    /* Ring writes (word position, strobes) */
    output wire [PORTS-1:0]           ring_wr_en,
    output wire [31:0]                ring_wr_word,
    output wire [DATA_WIDTH-1:0]      ring_wr_data,
    output wire [DATA_WIDTH/8-1:0]    ring_wr_strb
);

localparam LOG_BYTES = $clog2(DATA_WIDTH/8);
localparam LOG_D = $clog2(DEPTH);

initial begin
    if ((1 << LOG_D) != DEPTH) begin
        $error("Error: DEPTH must be a power of two (instance %m)");
        $finish;
    end
end

/* bursts in address order: destination and (ring) first word; read at the W
   pointer by the data side and at the B pointer by the response side */
reg bq_int_mem [0:DEPTH-1];
reg [1:0] bq_port_mem [0:DEPTH-1];
reg [31:0] bq_word_mem [0:DEPTH-1];
reg [LOG_D:0] wr_ptr_reg;
reg [LOG_D:0] w_ptr_reg;
reg [LOG_D:0] b_ptr_reg;
wire [LOG_D:0] used = wr_ptr_reg - b_ptr_reg;
wire room = !used[LOG_D];

assign m_axi_awid = s_axi_awid;
assign m_axi_awaddr = s_axi_awaddr;
assign m_axi_awlen = s_axi_awlen;
assign m_axi_awsize = s_axi_awsize;
assign m_axi_awburst = s_axi_awburst;
assign m_axi_awlock = s_axi_awlock;
assign m_axi_awcache = s_axi_awcache;
assign m_axi_awprot = s_axi_awprot;
assign m_axi_awvalid = s_axi_awvalid && !s_aw_int && room;
assign s_axi_awready = room && (s_aw_int || m_axi_awready);
wire aw_fire = s_axi_awvalid && s_axi_awready;
wire [63:0] awaddr_ext = {{(64-ADDR_WIDTH){1'b0}}, s_axi_awaddr};
// (ring positions are 32 bits of bytes: their words)
wire unused_awaddr = ^{awaddr_ext[63:LOG_BYTES+32], awaddr_ext[LOG_BYTES-1:0]};

/* data */
wire [LOG_D-1:0] w_idx = w_ptr_reg[LOG_D-1:0];
wire w_avail = w_ptr_reg != wr_ptr_reg;
wire w_int = bq_int_mem[w_idx];
reg [7:0] w_beat_reg;

assign m_axi_wdata = s_axi_wdata;
assign m_axi_wstrb = s_axi_wstrb;
assign m_axi_wlast = s_axi_wlast;
assign m_axi_wvalid = s_axi_wvalid && w_avail && !w_int;
assign s_axi_wready = w_avail && (w_int || m_axi_wready);
wire w_fire = s_axi_wvalid && s_axi_wready;

genvar g;
generate
    for (g = 0; g < PORTS; g = g + 1) begin : port
        assign ring_wr_en[g] = w_fire && w_int && bq_port_mem[w_idx] == g;
    end
endgenerate
assign ring_wr_word = bq_word_mem[w_idx] + {24'd0, w_beat_reg};
assign ring_wr_data = s_axi_wdata;
assign ring_wr_strb = s_axi_wstrb;

/* responses, in burst order */
wire [LOG_D-1:0] b_idx = b_ptr_reg[LOG_D-1:0];
wire b_avail = b_ptr_reg != wr_ptr_reg;
wire b_int = bq_int_mem[b_idx];
// a ring burst answers once its data is written (the W pointer has passed it)
wire b_int_ready = b_avail && b_int && b_ptr_reg != w_ptr_reg;

assign s_axi_bid = b_int ? {ID_WIDTH{1'b0}} : m_axi_bid;
assign s_axi_bresp = b_int ? 2'b00 : m_axi_bresp;
assign s_axi_bvalid = b_int_ready || (b_avail && !b_int && m_axi_bvalid);
assign m_axi_bready = b_avail && !b_int && s_axi_bready;
wire b_fire = s_axi_bvalid && s_axi_bready;

// Every register update below needs one of these (a clock enable): event-driven simulators
// skip the block on idle cycles.
wire wake = rst || aw_fire || w_fire || b_fire;

always @(posedge clk) begin
    if (wake) begin
        if (aw_fire) begin
            bq_int_mem[wr_ptr_reg[LOG_D-1:0]] <= s_aw_int;
            bq_port_mem[wr_ptr_reg[LOG_D-1:0]] <= s_aw_port;
            bq_word_mem[wr_ptr_reg[LOG_D-1:0]] <= awaddr_ext[LOG_BYTES+31:LOG_BYTES];
            wr_ptr_reg <= wr_ptr_reg + 1'b1;
        end
        if (w_fire) begin
            w_beat_reg <= w_beat_reg + 8'd1;
            if (s_axi_wlast) begin
                w_beat_reg <= 8'd0;
                w_ptr_reg <= w_ptr_reg + 1'b1;
            end
        end
        if (b_fire) begin
            b_ptr_reg <= b_ptr_reg + 1'b1;
        end

        if (rst) begin
            wr_ptr_reg <= {(LOG_D+1){1'b0}};
            w_ptr_reg <= {(LOG_D+1){1'b0}};
            b_ptr_reg <= {(LOG_D+1){1'b0}};
            w_beat_reg <= 8'd0;
        end
    end
end

endmodule

`resetall
