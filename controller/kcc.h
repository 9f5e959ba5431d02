/* kcc.h: the umbrella header: everything a program needs from kcc. */
#ifndef KCC_H
#define KCC_H
#include "kcc_base.h"
#include "kcc_collide.h"
#include "kcc_world.h"
#include "kcc_level.h"
#include "kcc_controller.h"
#include "kcc_trace.h"
#endif
