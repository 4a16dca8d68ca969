"""Compiler flags for C++ that runs Eigen math in the CPU runtime.

Without them GCC targets baseline x86-64 and Eigen vectorises with SSE2 only
(4-wide, no FMA): the OPT block forward then runs at about a third of the
speed of AVX2 + FMA (8-wide fused multiply-add). The flags are set per
target, not globally, so that the rest of the build keeps its defaults.

Use NN_EIGEN_COPTS on every target that multiplies matrices with Eigen and is
compared with runtime/nn (e.g. a GEMM-peak benchmark), so that both run the
same kernels. (runtime/nn's own GEMM instantiations are private to it, see
decoder_forward.cc, so mixing flags in one binary is safe, only not comparable.)

AVX-512 is not among them, so that objects built here also run on AVX2-only
hosts: the forward's GEMM has an AVX-512 kernel of its own (NN_AVX512_COPTS,
gemm_avx512.cc), chosen at run time on CPUs that have it (gemm.h).
"""

NN_EIGEN_COPTS = select({
    "//runtime/nn:x86_64": ["-mavx2", "-mfma"],
    "//conditions:default": [],
})

NN_AVX512_COPTS = select({
    "//runtime/nn:x86_64": ["-mavx512f", "-mavx512dq", "-mavx512vl", "-mavx512bw", "-mavx2", "-mfma"],
    "//conditions:default": [],
})
