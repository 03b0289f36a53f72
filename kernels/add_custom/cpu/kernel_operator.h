// CPU-target stand-in for CANN's kernel_operator.h: op_kernel/add_custom.cpp includes
// "kernel_operator.h", and the CPU build puts this directory first on the include path so the
// same kernel source gets the portable API subset of ascendc_cpu.h instead of the device one.
#ifndef ADD_CUSTOM_CPU_KERNEL_OPERATOR_H
#define ADD_CUSTOM_CPU_KERNEL_OPERATOR_H
#include "ascendc_cpu.h"
#endif
