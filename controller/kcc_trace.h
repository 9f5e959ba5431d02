/* kcc_trace.h: record and replay input traces (placeholder until the trace module lands). */
#ifndef KCC_TRACE_H
#define KCC_TRACE_H
#include "kcc_controller.h"
#endif
