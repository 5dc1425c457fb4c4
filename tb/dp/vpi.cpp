// SPDX-License-Identifier: MIT
/*
 * The simulator's signals, reached from the library (docs/performance.md, "Design: the
 * compiled data path"): the words of a transactor's beat buffer (tb/verilog's
 * pevb_xact_source.v, pevb_xact_sink.v), read and written through the simulator's VPI
 * (IEEE 1364, "Procedural interface"), as cocotb reaches them, without Python per word.
 *
 * The VPI's types and functions are vpi.h's.
 */
#include "vpi.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

using dpvpi::Value;
using dpvpi::VecVal;
using vpiHandle = dpvpi::Handle;

/* a beat buffer's words: a handle per word (found the first time it is used), their
 * width in bits, and room for one word's value */
struct dp_words {
	vpiHandle array;
	std::vector<vpiHandle> words;
	uint32_t width;
	std::vector<VecVal> value;

	vpiHandle word(uint32_t i)
	{
		vpiHandle &h = words[i];

		if (!h)
			h = vpi_handle_by_index(array, int32_t(i));
		return h;
	}
};

extern "C" {

/* whether the process has the VPI functions: a simulator loaded the library */
int dp_vpi_present(void)
{
	return vpi_handle_by_name && vpi_handle_by_index && vpi_get && vpi_get_value &&
	       vpi_put_value;
}

/* the words of the array named path (depth of them): null where there is none */
dp_words *dp_vpi_words(const char *path, uint32_t depth)
{
	if (!dp_vpi_present())
		return nullptr;
	vpiHandle array = vpi_handle_by_name(path, nullptr);
	if (!array)
		return nullptr;
	vpiHandle first = vpi_handle_by_index(array, 0);
	if (!first)
		return nullptr;
	auto *w = new dp_words();
	w->array = array;
	w->words.assign(depth, nullptr);
	w->words[0] = first;
	w->width = uint32_t(vpi_get(dpvpi::SIZE, first));
	w->value.resize((w->width + 31) / 32);
	return w;
}

void dp_vpi_words_free(dp_words *w)
{
	delete w;
}

uint32_t dp_vpi_width(const dp_words *w)
{
	return w->width;
}

/* word i's value into limbs (32 bits each, least significant first); x and z read 0 */
void dp_vpi_read(dp_words *w, uint32_t i, uint32_t *limbs)
{
	Value v;

	v.format = dpvpi::VECTOR_VAL;
	v.value.vector = nullptr;
	vpi_get_value(w->word(i), &v);
	for (size_t k = 0; k < w->value.size(); k++)
		limbs[k] = uint32_t(v.value.vector[k].aval & ~v.value.vector[k].bval);
}

/* word i set to limbs (as dp_vpi_read gives them), at once */
void dp_vpi_write(dp_words *w, uint32_t i, const uint32_t *limbs)
{
	Value v;

	for (size_t k = 0; k < w->value.size(); k++) {
		w->value[k].aval = int32_t(limbs[k]);
		w->value[k].bval = 0;
	}
	v.format = dpvpi::VECTOR_VAL;
	v.value.vector = w->value.data();
	vpi_put_value(w->word(i), &v, nullptr, dpvpi::NO_DELAY);
}

/* count words from word start on (wrapping at the depth) set at once to the values in
 * bytes (each word's limbs as dp_vpi_write takes them, little-endian, stride bytes a
 * word) */
void dp_vpi_write_run(dp_words *w, uint32_t start, uint32_t count, const uint8_t *bytes,
		      uint32_t stride)
{
	std::vector<uint32_t> limbs(w->value.size());
	uint32_t depth = uint32_t(w->words.size());

	for (uint32_t k = 0; k < count; k++) {
		std::memcpy(limbs.data(), bytes + size_t(k) * stride, limbs.size() * 4);
		dp_vpi_write(w, (start + k) % depth, limbs.data());
	}
}

/* count words from word start on (wrapping at the depth) read into bytes, as
 * dp_vpi_write_run takes them */
void dp_vpi_read_run(dp_words *w, uint32_t start, uint32_t count, uint8_t *bytes,
		     uint32_t stride)
{
	std::vector<uint32_t> limbs(w->value.size());
	uint32_t depth = uint32_t(w->words.size());

	for (uint32_t k = 0; k < count; k++) {
		dp_vpi_read(w, (start + k) % depth, limbs.data());
		std::memcpy(bytes + size_t(k) * stride, limbs.data(), limbs.size() * 4);
	}
}

/* the signal named path (a vector of up to 32 bits): its handle, null where there is
 * none */
void *dp_vpi_signal(const char *path)
{
	if (!dp_vpi_present())
		return nullptr;
	return vpi_handle_by_name(path, nullptr);
}

/* signal's value (a handle from dp_vpi_signal); x and z read 0 */
uint32_t dp_vpi_get(void *signal)
{
	Value v;

	v.format = dpvpi::VECTOR_VAL;
	v.value.vector = nullptr;
	vpi_get_value(static_cast<vpiHandle>(signal), &v);
	return uint32_t(v.value.vector[0].aval & ~v.value.vector[0].bval);
}

/* signal set to value, at once (a deposit, as cocotb's writes of the signal are) */
void dp_vpi_put(void *signal, uint32_t value)
{
	Value v;

	v.format = dpvpi::INT_VAL;
	v.value.integer = int32_t(value);
	vpi_put_value(static_cast<vpiHandle>(signal), &v, nullptr, dpvpi::NO_DELAY);
}

}  // extern "C"
