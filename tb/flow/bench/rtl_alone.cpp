// The RTL alone: the card's toplevel, Verilated, clocked by this main with no Python,
// replaying a record of every input the testbench drove into it (tb/bench/inputs.py).
// tb/flow/bench/rtl_alone.py builds it with the bench's Verilator flags and runs it.
//
//   rtl_alone RECORD FIRST LAST   (cycles; the window timed is [FIRST, LAST))
//
// prints one line: "cycles <n> seconds <wall> window_cycles <m> window_seconds <w>
// beats <b> diverged <cycle>": b is the beats the RTL handed over on RQ and CC, diverged
// the first cycle where one was handed over in the replay and not in the record or the
// other way round (-1: none; the replay then did the recorded run's work).
// pevb_ports.h (generated beside this file in the build) lists the input ports as
// PORT(name) lines, in the record's names.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include "Vtop.h"
#include "verilated.h"

namespace {

using Words = std::vector<uint32_t>;

template <typename T>
void put(T& port, const Words& w) {
    uint64_t v = w.empty() ? 0 : w[0];
    if (w.size() > 1) v |= static_cast<uint64_t>(w[1]) << 32;
    port = static_cast<T>(v);
}

template <std::size_t N>
void put(VlWide<N>& port, const Words& w) {
    for (std::size_t i = 0; i < N; ++i) port[i] = i < w.size() ? w[i] : 0;
}

Words parse_hex(const std::string& hex) {
    Words out;
    for (std::size_t end = hex.size(); end > 0;) {
        std::size_t begin = end > 8 ? end - 8 : 0;
        out.push_back(static_cast<uint32_t>(std::strtoul(hex.substr(begin, end - begin).c_str(), nullptr, 16)));
        end = begin;
    }
    return out;
}

struct Event {
    uint64_t cycle;
    int port;
    Words value;
};

// the RQ and CC handshakes of the record, by cycle: bit 0 RQ, bit 1 CC
std::unordered_map<uint64_t, int> handed;

}  // namespace

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s RECORD FIRST LAST\n", argv[0]);
        return 2;
    }
    const uint64_t first = std::strtoull(argv[2], nullptr, 10);
    const uint64_t last = std::strtoull(argv[3], nullptr, 10);
    auto ctx = std::make_unique<VerilatedContext>();
    auto top = std::make_unique<Vtop>(ctx.get());

    std::vector<std::function<void(const Words&)>> setters;
    std::unordered_map<std::string, int> index;
#define PORT(name)                                                              \
    index[#name] = static_cast<int>(setters.size());                           \
    setters.push_back([&top](const Words& w) { put(top->name, w); });
#include "pevb_ports.h"
#undef PORT

    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "%s: cannot read\n", argv[1]);
        return 2;
    }
    std::vector<Event> events;
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        Event e;
        std::string name, hex;
        if (!(fields >> e.cycle >> name)) continue;
        if (name == "=rq" || name == "=cc") {
            handed[e.cycle] |= name == "=rq" ? 1 : 2;
            continue;
        }
        if (!(fields >> hex)) continue;
        auto it = index.find(name);
        if (it == index.end()) {
            std::fprintf(stderr, "%s: no input port %s\n", argv[1], name.c_str());
            return 2;
        }
        e.port = it->second;
        e.value = parse_hex(hex);
        events.push_back(std::move(e));
    }
    const uint64_t end = events.empty() ? 0 : events.back().cycle + 1;

    using clock = std::chrono::steady_clock;
    top->user_clk = 1;
    top->eval();
    std::size_t next = 0;
    uint64_t beats = 0;
    int64_t diverged = -1;
    clock::time_point t0 = clock::now(), w0 = t0, w1 = t0;
    for (uint64_t c = 0; c < end; ++c) {
        if (c == first) w0 = clock::now();
        if (c == last) w1 = clock::now();
        top->user_clk = 0;
        for (; next < events.size() && events[next].cycle == c; ++next) {
            setters[events[next].port](events[next].value);
        }
        top->eval();
        const int now = (top->m_axis_rq_tvalid && top->m_axis_rq_tready ? 1 : 0) |
                        (top->m_axis_cc_tvalid && top->m_axis_cc_tready ? 2 : 0);
        beats += (now & 1) + (now >> 1);
        if (diverged < 0) {
            auto it = handed.find(c);
            if ((it == handed.end() ? 0 : it->second) != now) diverged = static_cast<int64_t>(c);
        }
        top->user_clk = 1;
        top->eval();
    }
    clock::time_point t1 = clock::now();
    if (last >= end) w1 = t1;
    const double total = std::chrono::duration<double>(t1 - t0).count();
    const double window = std::chrono::duration<double>(w1 - w0).count();
    const uint64_t wend = last < end ? last : end;
    std::printf("cycles %llu seconds %.6f window_cycles %llu window_seconds %.6f beats %llu "
                "diverged %lld\n",
                static_cast<unsigned long long>(end), total,
                static_cast<unsigned long long>(wend > first ? wend - first : 0), window,
                static_cast<unsigned long long>(beats), static_cast<long long>(diverged));
    top->final();
    return 0;
}
