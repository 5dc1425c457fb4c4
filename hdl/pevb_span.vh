// SPDX-License-Identifier: MIT
// span(lane, len): the data beats that len bytes cover from byte lane `lane` of the
// first (the lane plus the length, rounded up to whole beats).  Included inside the
// modules that cut transfers into beats (pevb_axi_rd, pevb_axi_wr, pevb_axis_rd), which
// define CW (the beat count's width), LOG_BYTES (log2 of a beat's bytes) and BYTES_M1
// (a beat's bytes less one, 32 bits).
function [CW-1:0] span;
    input [LOG_BYTES-1:0] lane;
    input [12:0] len;
    reg [CW-1:0] total;
    begin
        total = {{(CW-LOG_BYTES){1'b0}}, lane} + {1'b0, len} + BYTES_M1[CW-1:0];
        span = total >> LOG_BYTES;
    end
endfunction
