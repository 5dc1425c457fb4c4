/* SPDX-License-Identifier: MIT */
/*
 * The few VPI types and constants the library uses (IEEE 1364, "Procedural interface"),
 * laid out as the standard lays them out, and the simulator's own functions, found in the
 * process the library is loaded into (Icarus's vvp; a Verilator model built for cocotb,
 * with --vpi). They are declared weak, so the library also loads where there is no
 * simulator (its unit tests), and then finds no signal.
 */
#ifndef PEVB_DP_VPI_H
#define PEVB_DP_VPI_H

#include <cstdint>

namespace dpvpi {

using Handle = uint32_t *;	/* vpiHandle */

struct VecVal {			/* s_vpi_vecval */
	int32_t aval, bval;
};

struct Value {			/* s_vpi_value */
	int32_t format;
	union {
		char *str;
		int32_t integer;
		double real;
		VecVal *vector;
		void *misc;
	} value;
};

struct Time {			/* s_vpi_time */
	int32_t type;
	uint32_t high, low;
	double real;
};

struct CbData {			/* s_cb_data */
	int32_t reason;
	int32_t (*cb_rtn)(CbData *);
	Handle obj;
	Time *time;
	Value *value;
	int32_t index;
	char *user_data;
};

constexpr int32_t INT_VAL = 6;			/* vpiIntVal */
constexpr int32_t VECTOR_VAL = 9;		/* vpiVectorVal */
constexpr int32_t SIZE = 4;			/* vpiSize */
constexpr int32_t NO_DELAY = 1;			/* vpiNoDelay */
constexpr int32_t SIM_TIME = 2;			/* vpiSimTime */
constexpr int32_t SUPPRESS_TIME = 3;		/* vpiSuppressTime */
constexpr int32_t CB_VALUE_CHANGE = 1;		/* cbValueChange */
constexpr int32_t CB_READ_WRITE_SYNCH = 6;	/* cbReadWriteSynch */

}  // namespace dpvpi

extern "C" {
dpvpi::Handle vpi_handle_by_name(const char *name, dpvpi::Handle scope) __attribute__((weak));
dpvpi::Handle vpi_handle_by_index(dpvpi::Handle object, int32_t index) __attribute__((weak));
int32_t vpi_get(int32_t property, dpvpi::Handle object) __attribute__((weak));
void vpi_get_value(dpvpi::Handle expr, dpvpi::Value *value) __attribute__((weak));
dpvpi::Handle vpi_put_value(dpvpi::Handle object, dpvpi::Value *value, void *time,
			    int32_t flags) __attribute__((weak));
dpvpi::Handle vpi_register_cb(dpvpi::CbData *data) __attribute__((weak));
int32_t vpi_remove_cb(dpvpi::Handle cb) __attribute__((weak));
}

namespace dpvpi {

/* rtn(user's callback data) in the ReadWrite phase of this time step; time: where the
 * callback's time is kept while it is registered */
inline Handle at_read_write(int32_t (*rtn)(CbData *), void *user, Time *time)
{
	CbData cb{};

	*time = Time{SIM_TIME, 0, 0, 0.0};
	cb.reason = CB_READ_WRITE_SYNCH;
	cb.cb_rtn = rtn;
	cb.time = time;
	cb.user_data = static_cast<char *>(user);
	return vpi_register_cb(&cb);
}

/* rtn(user's callback data) on every change of signal, until removed; time and value:
 * where the callback's are kept while it is registered */
inline Handle on_change(void *signal, int32_t (*rtn)(CbData *), void *user, Time *time,
			Value *value)
{
	CbData cb{};

	*time = Time{SUPPRESS_TIME, 0, 0, 0.0};
	value->format = INT_VAL;
	cb.reason = CB_VALUE_CHANGE;
	cb.cb_rtn = rtn;
	cb.obj = static_cast<Handle>(signal);
	cb.time = time;
	cb.value = value;
	cb.user_data = static_cast<char *>(user);
	return vpi_register_cb(&cb);
}

}  // namespace dpvpi

#endif /* PEVB_DP_VPI_H */
